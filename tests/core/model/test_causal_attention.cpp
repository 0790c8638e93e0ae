// Blocked causal attention against softmax(mask + q k^T * scale) v written out with ATen ops:
// forward values and the gradients of q, k and v, in float64 (1e-12) and float32 (float
// rounding), for lengths inside one block, at block edges and across several blocks.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "model/causal_attention.h"

using namespace depthlab;

namespace {

torch::Tensor compositeAttention(const torch::Tensor& q, const torch::Tensor& k,
                                 const torch::Tensor& v, double scale) {
  const int64_t T = q.size(1);
  auto mask = torch::full({T, T}, -std::numeric_limits<double>::infinity(), q.options()).triu(1);
  return torch::bmm(torch::softmax(torch::baddbmm(mask, q, k.transpose(1, 2), 1.0, scale), -1), v);
}

}  // namespace

TEST(CausalAttention, MatchesTheCompositeExpressionAcrossBlockEdges) {
  for (int64_t T : {1, 5, 63, 64, 65, 130, 256}) {
    for (auto dtype : {torch::kFloat64, torch::kFloat32}) {
      SCOPED_TRACE("T " + std::to_string(T) + ", " + c10::toString(dtype));
      torch::manual_seed(static_cast<uint64_t>(T));
      auto opts = torch::TensorOptions().dtype(dtype);
      const int64_t N = 3, D = 8;
      const double scale = 1.0 / std::sqrt(double(D));
      auto q0 = torch::randn({N, T, D}, opts) * 2, k0 = torch::randn({N, T, D}, opts) * 2;
      auto v0 = torch::randn({N, T, D}, opts), dy = torch::randn({N, T, D}, opts);

      auto q = q0.clone().requires_grad_(true), k = k0.clone().requires_grad_(true);
      auto v = v0.clone().requires_grad_(true);
      auto y = model::fusedCausalAttention(q, k, v, scale);
      y.backward(dy);
      auto qr = q0.clone().requires_grad_(true), kr = k0.clone().requires_grad_(true);
      auto vr = v0.clone().requires_grad_(true);
      auto yr = compositeAttention(qr, kr, vr, scale);
      yr.backward(dy);

      const double tol = dtype == torch::kFloat64 ? 1e-12 : 1e-5;
      EXPECT_TRUE(torch::allclose(y, yr, tol, tol)) << (y - yr).abs().max().item<double>();
      EXPECT_TRUE(torch::allclose(q.grad(), qr.grad(), tol, tol))
          << (q.grad() - qr.grad()).abs().max().item<double>();
      EXPECT_TRUE(torch::allclose(k.grad(), kr.grad(), tol, tol))
          << (k.grad() - kr.grad()).abs().max().item<double>();
      EXPECT_TRUE(torch::allclose(v.grad(), vr.grad(), tol, tol))
          << (v.grad() - vr.grad()).abs().max().item<double>();
    }
  }
}

TEST(CausalAttention, TheFirstPositionSeesOnlyItself) {
  // Row 0 attends to key 0 alone whatever the scores: y[:, 0] = v[:, 0] exactly.
  auto q = torch::randn({2, 70, 4}) * 50, k = torch::randn({2, 70, 4}) * 50;
  auto v = torch::randn({2, 70, 4});
  auto y = model::fusedCausalAttention(q, k, v, 0.5);
  EXPECT_TRUE(torch::equal(y.select(1, 0), v.select(1, 0)));
  EXPECT_TRUE(torch::isfinite(y).all().item<bool>());
}

// Blocked causal attention against softmax(mask + q k^T * scale) v written out with ATen ops:
// forward values and the gradients of q, k and v, in float64 (1e-12) and float32 (float
// rounding relative to each tensor's scale), for lengths inside one block, at block edges and
// across several blocks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "model/causal_attention.h"
#include "train/thread_share.h"

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
  for (int64_t T : {1, 5, 16, 17, 33, 63, 64, 65, 130, 256}) {
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
      auto y = model::fusedCausalAttention(q.unsqueeze(1), k.unsqueeze(1), v.unsqueeze(1), scale);
      y.backward(dy);  // (N, T, D): one head
      auto qr = q0.clone().requires_grad_(true), kr = k0.clone().requires_grad_(true);
      auto vr = v0.clone().requires_grad_(true);
      auto yr = compositeAttention(qr, kr, vr, scale);
      yr.backward(dy);

      // float32: rounding of sums over up to T terms taken in another order (vector lanes)
      const bool f64 = dtype == torch::kFloat64;
      auto close = [&](const torch::Tensor& a, const torch::Tensor& b, const char* what) {
        const double scale = std::max(1.0, b.abs().max().item<double>());
        EXPECT_TRUE(torch::allclose(a, b, f64 ? 1e-12 : 1e-4, (f64 ? 1e-12 : 1e-5) * scale))
            << what << ": max difference " << (a - b).abs().max().item<double>() << " of values up to "
            << scale;
      };
      close(y, yr, "y");
      close(q.grad(), qr.grad(), "dq");
      close(k.grad(), kr.grad(), "dk");
      close(v.grad(), vr.grad(), "dv");
    }
  }
}

TEST(CausalAttention, TheFirstPositionSeesOnlyItself) {
  // Row 0 attends to key 0 alone whatever the scores: y[:, 0] = v[:, 0] exactly.
  auto q = torch::randn({2, 70, 4}) * 50, k = torch::randn({2, 70, 4}) * 50;
  auto v = torch::randn({2, 70, 4});
  auto y = model::fusedCausalAttention(q.unsqueeze(1), k.unsqueeze(1), v.unsqueeze(1), 0.5);
  EXPECT_TRUE(torch::equal(y.select(1, 0), v.select(1, 0)));
  EXPECT_TRUE(torch::isfinite(y).all().item<bool>());
}

TEST(CausalAttention, HeadsInRowsOutMatchesTheCompositeExpression) {
  // q, k, v (B, H, T, D) -> (B, T, H * D) written in place by the GEMMs: the same numbers as the
  // per-slice composite with the heads merged afterwards, forward and the gradients of q, k, v;
  // the output's gradient arrives as the output projection gives it, contiguous (B, T, H * D).
  const int64_t B = 2, H = 3, D = 8;
  for (int64_t T : {1, 17, 64, 65}) {
    SCOPED_TRACE("T " + std::to_string(T));
    torch::manual_seed(static_cast<uint64_t>(100 + T));
    auto opts = torch::TensorOptions().dtype(torch::kFloat64);
    const double scale = 1.0 / std::sqrt(double(D));
    auto q0 = torch::randn({B, H, T, D}, opts), k0 = torch::randn({B, H, T, D}, opts);
    auto v0 = torch::randn({B, H, T, D}, opts), dy = torch::randn({B, T, H * D}, opts);

    auto q = q0.clone().requires_grad_(true), k = k0.clone().requires_grad_(true);
    auto v = v0.clone().requires_grad_(true);
    auto y = model::fusedCausalAttention(q, k, v, scale);
    ASSERT_EQ(y.sizes(), (std::vector<int64_t>{B, T, H * D}));
    y.backward(dy);
    auto qr = q0.clone().requires_grad_(true), kr = k0.clone().requires_grad_(true);
    auto vr = v0.clone().requires_grad_(true);
    auto yr = compositeAttention(qr.reshape({B * H, T, D}), kr.reshape({B * H, T, D}),
                                 vr.reshape({B * H, T, D}), scale)  // (B H, T, D)
                  .view({B, H, T, D})
                  .transpose(1, 2)
                  .reshape({B, T, H * D});
    yr.backward(dy);
    EXPECT_TRUE(torch::allclose(y, yr, 1e-12, 1e-12));
    EXPECT_TRUE(torch::allclose(q.grad(), qr.grad(), 1e-12, 1e-12));
    EXPECT_TRUE(torch::allclose(k.grad(), kr.grad(), 1e-12, 1e-12));
    EXPECT_TRUE(torch::allclose(v.grad(), vr.grad(), 1e-12, 1e-12));
  }
}

TEST(CausalAttention, ResultsDoNotDependOnTheThreadCount) {
  // Each (batch, head) slice is computed alone, all its blocks in turn, on whichever thread
  // takes it: the output and the gradients are the same bits at 1 and at 2 intra-op threads.
  const int64_t B = 3, H = 4, T = 65, D = 16;
  torch::manual_seed(7);
  auto q0 = torch::randn({B, H, T, D}), k0 = torch::randn({B, H, T, D});
  auto v0 = torch::randn({B, H, T, D}), dy = torch::randn({B, T, H * D});
  auto run = [&](int threads) {
    train::IntraOpThreads scope(threads);
    auto q = q0.clone().requires_grad_(true), k = k0.clone().requires_grad_(true);
    auto v = v0.clone().requires_grad_(true);
    auto y = model::fusedCausalAttention(q, k, v, 0.25);
    y.backward(dy);
    return std::vector<torch::Tensor>{y.detach(), q.grad(), k.grad(), v.grad()};
  };
  const auto one = run(1), two = run(2);
  for (size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(torch::equal(one[i], two[i])) << i;
}

TEST(CausalAttention, TakesSizeOneTimeAxesWithAnyStride) {
  // At T = 1 contiguous() keeps whatever stride the time axis had (here 0, as an expanded
  // tensor has); the block products must not hand such a stride to the BLAS.
  const int64_t B = 2, H = 3, D = 8;
  torch::manual_seed(11);
  auto opts = torch::TensorOptions().dtype(torch::kFloat64);
  auto odd = [&](const torch::Tensor& x) {  // (B, H, 1, D), time stride 0
    return x.as_strided({B, H, 1, D}, {H * D, D, 0, 1});
  };
  auto q0 = torch::randn({B, H, 1, D}, opts), k0 = torch::randn({B, H, 1, D}, opts);
  auto v0 = torch::randn({B, H, 1, D}, opts);
  auto dy = torch::randn({B, 1, H * D}, opts).as_strided({B, 1, H * D}, {H * D, 0, 1});
  auto q = q0.clone().requires_grad_(true), k = k0.clone().requires_grad_(true);
  auto v = v0.clone().requires_grad_(true);
  auto y = model::fusedCausalAttention(odd(q), odd(k), odd(v), 0.5);
  y.backward(dy);
  // One position attends to itself alone: y = v with the heads merged, dv = dy, dq = dk = 0.
  EXPECT_TRUE(torch::allclose(y, v0.transpose(1, 2).reshape({B, 1, H * D}), 0, 1e-15));
  EXPECT_TRUE(torch::allclose(v.grad(), dy.reshape({B, 1, H, D}).transpose(1, 2), 0, 1e-15));
  EXPECT_TRUE(torch::allclose(q.grad(), torch::zeros_like(q0), 0, 1e-15));
  EXPECT_TRUE(torch::allclose(k.grad(), torch::zeros_like(k0), 0, 1e-15));
}

// The packed-product functions against the composite expressions they replace: q/k/v heads
// (RoPE on q and k, the head split, grouped-query shapes, an unused output) and SwiGLU from one
// gate/up product (including gates far in the tails of the sigmoid), forward values and
// gradients in float64 (1e-12) and float32 (float rounding), and through the Rope class.
#include <gtest/gtest.h>

#include "kernels/cpu_kernels.h"
#include "model/layers.h"
#include "model/packed_ops.h"

using namespace depthlab;

namespace {

struct FusedSwitchGuard {
  bool was = kernels::fusedKernelsEnabled();
  ~FusedSwitchGuard() { kernels::setFusedKernelsEnabled(was); }
};

// The composite RoPE: split heads, rotate half.
torch::Tensor compositeRope(const torch::Tensor& x, const torch::Tensor& cos,
                            const torch::Tensor& sin, int64_t H) {
  const int64_t B = x.size(0), T = x.size(1), D = x.size(2) / H;
  auto xh = x.view({B, T, H, D}).transpose(1, 2);  // (B, H, T, D)
  auto rotated = torch::cat({-xh.slice(-1, D / 2, D), xh.slice(-1, 0, D / 2)}, -1);
  return xh * cos.slice(0, 0, T) + rotated * sin.slice(0, 0, T);
}

// The tables the Rope class holds, rebuilt from the formula: (T, D) each.
std::pair<torch::Tensor, torch::Tensor> ropeTables(int64_t D, int64_t T) {
  auto inv = torch::pow(10000.0, -torch::arange(0, D, 2, torch::kFloat64) / double(D));
  auto freqs = torch::outer(torch::arange(T, torch::kFloat64), inv);
  auto emb = torch::cat({freqs, freqs}, -1);
  return {emb.cos(), emb.sin()};
}

// q, k, v and the product's gradient for given output gradients (an undefined one: unused).
struct QkvResult {
  std::vector<torch::Tensor> out;
  torch::Tensor dqkv;
};

template <class F>
QkvResult runQkv(const torch::Tensor& qkv0, const std::vector<torch::Tensor>& grads, F f) {
  auto qkv = qkv0.detach().clone().requires_grad_(true);
  auto out = f(qkv);
  std::vector<torch::Tensor> used, usedGrads;
  for (size_t i = 0; i < out.size(); ++i) {
    if (grads[i].defined()) {
      used.push_back(out[i]);
      usedGrads.push_back(grads[i]);
    }
  }
  torch::autograd::backward(used, usedGrads);
  for (auto& o : out) o = o.detach();
  return {out, qkv.grad()};
}

}  // namespace

TEST(PackedOps, QkvHeadsMatchCompositeForEveryHeadLayout) {
  struct Shape {
    int64_t H, K, D, T;
  };
  for (auto shape : {Shape{4, 4, 8, 20}, Shape{4, 2, 6, 7}, Shape{3, 1, 4, 1}}) {
    const int64_t H = shape.H, K = shape.K, D = shape.D, T = shape.T, B = 3;
    for (auto dtype : {torch::kFloat64, torch::kFloat32}) {
      SCOPED_TRACE(std::to_string(H) + " heads, " + std::to_string(K) + " kv heads, " +
                   c10::toString(dtype));
      torch::manual_seed(6);
      auto opts = torch::TensorOptions().dtype(dtype);
      auto [cos64, sin64] = ropeTables(D, T + 5);  // tables longer than T, as the model's are
      auto cos = cos64.to(dtype), sin = sin64.to(dtype);
      auto qkv = torch::randn({B, T, (H + 2 * K) * D}, opts);  // (B, T, (H + 2K) D)
      std::vector<torch::Tensor> grads = {torch::randn({B, H, T, D}, opts),
                                          torch::randn({B, K, T, D}, opts),
                                          torch::randn({B, K, T, D}, opts)};
      auto fused = runQkv(qkv, grads, [&](const torch::Tensor& x) {
        return model::fusedQkvHeads(x, cos, sin, H, K);
      });
      auto composite = runQkv(qkv, grads, [&](const torch::Tensor& x) {
        auto parts = x.split_with_sizes({H * D, K * D, K * D}, -1);
        return std::vector<torch::Tensor>{
            compositeRope(parts[0], cos, sin, H), compositeRope(parts[1], cos, sin, K),
            parts[2].reshape({B, T, K, D}).transpose(1, 2)};
      });
      const double tol = dtype == torch::kFloat64 ? 1e-12 : 1e-6;
      for (int i = 0; i < 3; ++i) {
        EXPECT_TRUE(fused.out[i].is_contiguous());
        EXPECT_EQ(fused.out[i].sizes(), composite.out[i].sizes());
        EXPECT_TRUE(torch::allclose(fused.out[i], composite.out[i], tol, tol)) << "output " << i;
      }
      EXPECT_TRUE(torch::allclose(fused.dqkv, composite.dqkv, tol, tol));

      // v unused: its part of the gradient is zero, q's and k's parts as before.
      grads[2] = torch::Tensor();
      auto noV = runQkv(qkv, grads, [&](const torch::Tensor& x) {
        return model::fusedQkvHeads(x, cos, sin, H, K);
      });
      EXPECT_TRUE(torch::allclose(noV.dqkv.narrow(-1, 0, (H + K) * D),
                                  composite.dqkv.narrow(-1, 0, (H + K) * D), tol, tol));
      EXPECT_EQ(noV.dqkv.narrow(-1, (H + K) * D, K * D).abs().max().item<double>(), 0.0);
    }
  }
}

TEST(PackedOps, RopeClassGivesTheSameHeadsFusedAndComposite) {
  FusedSwitchGuard guard;
  model::Rope rope(8, 32, 10000.0);
  torch::manual_seed(3);
  auto qkv = torch::randn({2, 20, (4 + 2 * 2) * 8});  // H = 4, K = 2, D = 8
  auto fused = rope.applyQkvHeads(qkv, 4, 2);
  kernels::setFusedKernelsEnabled(false);
  auto parts = qkv.split_with_sizes({32, 16, 16}, -1);
  auto q = rope.applySplitHeads(parts[0], 4), k = rope.applySplitHeads(parts[1], 2);
  EXPECT_TRUE(torch::allclose(fused[0], q, 1e-6, 1e-6));
  EXPECT_TRUE(torch::allclose(fused[1], k, 1e-6, 1e-6));
  EXPECT_TRUE(torch::equal(fused[2], parts[2].reshape({2, 20, 2, 8}).transpose(1, 2)));
}

TEST(PackedOps, SwigluMatchesCompositeIncludingTheSigmoidTails) {
  for (auto dtype : {torch::kFloat64, torch::kFloat32}) {
    SCOPED_TRACE(c10::toString(dtype));
    torch::manual_seed(4);
    auto opts = torch::TensorOptions().dtype(dtype);
    const int64_t F = 37;  // odd: the vector loops' remainders run too
    auto gu = torch::randn({3, 5, 2 * F}, opts) * 3;  // (B, T, 2F)
    // Gates in the tails (and at 0) where exp over- or underflows without the clamp.
    auto tails = torch::tensor({-200.0, -90.0, -87.5, -30.0, 0.0, 30.0, 87.5, 90.0, 200.0}, opts);
    gu.select(0, 0).select(0, 0).narrow(0, 0, tails.size(0)).copy_(tails);
    auto dh = torch::randn({3, 5, F}, opts);

    auto a = gu.clone().requires_grad_(true);
    auto fused = model::fusedSwiglu(a);
    fused.backward(dh);
    auto b = gu.clone().requires_grad_(true);
    auto parts = b.split_with_sizes({F, F}, -1);
    auto composite = torch::silu(parts[0]) * parts[1];
    composite.backward(dh);

    ASSERT_EQ(fused.sizes(), composite.sizes());
    ASSERT_TRUE(torch::isfinite(fused).all().item<bool>());
    ASSERT_TRUE(torch::isfinite(a.grad()).all().item<bool>());
    const double tol = dtype == torch::kFloat64 ? 1e-12 : 2e-6;
    EXPECT_TRUE(torch::allclose(fused, composite, tol, tol))
        << (fused - composite).abs().max().item<double>();
    EXPECT_TRUE(torch::allclose(a.grad(), b.grad(), tol, tol))
        << (a.grad() - b.grad()).abs().max().item<double>();
  }
}

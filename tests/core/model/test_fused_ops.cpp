// The fused CPU RMSNorm and RoPE against the composite ATen expressions they replace:
// forward values and gradients (float64 to 1e-12, float32 to float rounding), non-contiguous
// inputs, the folded LNS factor, thread-count independence, and whole decoders under every
// scheme trained with the fused path on and off.
#include <gtest/gtest.h>

#include "kernels/cpu_kernels.h"
#include "model/decoder.h"
#include "model/fused_ops.h"
#include "model/layers.h"
#include "support/model_fixtures.h"

using namespace depthlab;

namespace {

// Restores the switch and thread count whatever a test does.
struct FusedSwitchGuard {
  bool was = kernels::fusedKernelsEnabled();
  int threads = torch::get_num_threads();
  ~FusedSwitchGuard() {
    kernels::setFusedKernelsEnabled(was);
    torch::set_num_threads(threads);
  }
};

// The composite RMSNorm of layers.cpp, written out independently.
torch::Tensor compositeRmsNorm(const torch::Tensor& x, const torch::Tensor& w, double eps,
                               double scale) {
  return w * (x * torch::rsqrt(x.pow(2).mean(-1, true) + eps)) * scale;
}

// The composite RoPE: split heads, rotate half.
torch::Tensor compositeRope(const torch::Tensor& x, const torch::Tensor& cos,
                            const torch::Tensor& sin, int64_t H) {
  const int64_t B = x.size(0), T = x.size(1), D = x.size(2) / H;
  auto xh = x.view({B, T, H, D}).transpose(1, 2);  // (B, H, T, D)
  auto rotated = torch::cat({-xh.slice(-1, D / 2, D), xh.slice(-1, 0, D / 2)}, -1);
  return xh * cos.slice(0, 0, T) + rotated * sin.slice(0, 0, T);
}

struct Grads {
  torch::Tensor y, dx, dw;
};

template <class F>
Grads run(const torch::Tensor& x0, const torch::Tensor& w0, const torch::Tensor& dy, F f) {
  auto x = x0.detach().clone().requires_grad_(true);
  auto w = w0.defined() ? w0.detach().clone().requires_grad_(true) : torch::Tensor();
  auto y = f(x, w);
  y.backward(dy);
  return {y.detach(), x.grad(), w.defined() ? w.grad() : torch::Tensor()};
}

}  // namespace

TEST(FusedOps, RmsNormMatchesCompositeInDoubleAndFloat) {
  FusedSwitchGuard guard;
  for (auto dtype : {torch::kFloat64, torch::kFloat32}) {
    for (double scale : {1.0, 1.0 / std::sqrt(7.0)}) {
      SCOPED_TRACE(std::string(c10::toString(dtype)) + " scale " + std::to_string(scale));
      torch::manual_seed(3);
      auto opts = torch::TensorOptions().dtype(dtype);
      auto x = torch::randn({3, 37, 48}, opts) * 2.5;            // (B, T, C), odd row count
      auto w = 1.0 + 0.3 * torch::randn({48}, opts);
      auto dy = torch::randn({3, 37, 48}, opts);
      auto fused = run(x, w, dy, [&](auto& a, auto& b) {
        return model::fusedRmsNorm(a, b, 1e-6, scale);
      });
      auto ref = run(x, w, dy, [&](auto& a, auto& b) {
        return compositeRmsNorm(a, b, 1e-6, scale);
      });
      const double tol = dtype == torch::kFloat64 ? 1e-12 : 2e-5;
      EXPECT_TRUE(torch::allclose(fused.y, ref.y, tol, tol));
      EXPECT_TRUE(torch::allclose(fused.dx, ref.dx, tol, tol));
      EXPECT_TRUE(torch::allclose(fused.dw, ref.dw, tol * 10, tol * 10));
    }
  }
}

TEST(FusedOps, RmsNormTakesNonContiguousInputAndGradient) {
  FusedSwitchGuard guard;
  torch::manual_seed(4);
  auto opts = torch::TensorOptions().dtype(torch::kFloat64);
  auto x = torch::randn({16, 5, 24}, opts).transpose(0, 1);  // (5, 16, 24), not contiguous
  auto w = torch::randn({24}, opts);
  auto dy = torch::randn({24, 16, 5}, opts).permute({2, 1, 0});
  ASSERT_FALSE(x.is_contiguous());
  auto fused = run(x, w, dy, [](auto& a, auto& b) { return model::fusedRmsNorm(a, b, 1e-6, 0.5); });
  auto ref = run(x, w, dy, [](auto& a, auto& b) { return compositeRmsNorm(a, b, 1e-6, 0.5); });
  EXPECT_TRUE(torch::allclose(fused.y, ref.y, 1e-12, 1e-12));
  EXPECT_TRUE(torch::allclose(fused.dx, ref.dx, 1e-12, 1e-12));
  EXPECT_TRUE(torch::allclose(fused.dw, ref.dw, 1e-11, 1e-11));
}

TEST(FusedOps, RmsNormWeightGradientIsTheSameForAnyThreadCount) {
  FusedSwitchGuard guard;
  torch::manual_seed(5);
  auto x = torch::randn({64, 64, 256});  // enough rows to be split across threads
  auto w = torch::randn({256});
  auto dy = torch::randn({64, 64, 256});
  auto f = [](auto& a, auto& b) { return model::fusedRmsNorm(a, b, 1e-6, 1.0); };
  torch::set_num_threads(1);
  auto one = run(x, w, dy, f);
  torch::set_num_threads(2);
  auto two = run(x, w, dy, f);
  EXPECT_TRUE(torch::equal(one.y, two.y));
  EXPECT_TRUE(torch::equal(one.dx, two.dx));
  EXPECT_TRUE(torch::equal(one.dw, two.dw));
}

TEST(FusedOps, RopeSplitHeadsMatchesComposite) {
  FusedSwitchGuard guard;
  model::Rope rope(8, 32, 10000.0);
  // The tables the Rope class holds, rebuilt here from the formula.
  auto inv = torch::pow(10000.0, -torch::arange(0, 8, 2, torch::kFloat64) / 8.0);
  auto emb = torch::cat({torch::outer(torch::arange(32, torch::kFloat64), inv),
                         torch::outer(torch::arange(32, torch::kFloat64), inv)}, -1);  // (T, D)
  for (auto dtype : {torch::kFloat64, torch::kFloat32}) {
    SCOPED_TRACE(c10::toString(dtype));
    torch::manual_seed(6);
    auto opts = torch::TensorOptions().dtype(dtype);
    auto cos = emb.cos().to(dtype), sin = emb.sin().to(dtype);
    auto x = torch::randn({3, 20, 4 * 8}, opts);   // (B, T, H*D), T shorter than the tables
    auto dy = torch::randn({3, 4, 20, 8}, opts);   // (B, H, T, D)
    auto fused = run(x, {}, dy, [&](auto& a, auto&) {
      return model::fusedRopeSplitHeads(a, cos, sin, 4);
    });
    auto ref = run(x, {}, dy, [&](auto& a, auto&) { return compositeRope(a, cos, sin, 4); });
    const double tol = dtype == torch::kFloat64 ? 1e-12 : 1e-6;
    EXPECT_TRUE(fused.y.is_contiguous());
    EXPECT_EQ(fused.y.sizes(), (std::vector<int64_t>{3, 4, 20, 8}));
    EXPECT_TRUE(torch::allclose(fused.y, ref.y, tol, tol));
    EXPECT_TRUE(torch::allclose(fused.dx, ref.dx, tol, tol));
    // Through the Rope class: fused and composite paths agree too.
    auto viaClass = rope.applySplitHeads(x, 4);
    kernels::setFusedKernelsEnabled(false);
    auto viaComposite = rope.applySplitHeads(x, 4);
    kernels::setFusedKernelsEnabled(true);
    EXPECT_TRUE(torch::allclose(viaClass, viaComposite, tol, tol));
    // q's part of one q/k/v product, read in place (rows 3 * H*D apart): the same values, and
    // the gradient lands in that part of the product's gradient only.
    auto wide = torch::randn({3, 20, 3 * 4 * 8}, opts).requires_grad_(true);  // (B, T, 3*H*D)
    auto part = wide.narrow(-1, 32, 32);  // the middle third: strided rows, not copied
    ASSERT_FALSE(part.is_contiguous());
    auto fromPart = model::fusedRopeSplitHeads(part, cos, sin, 4);
    fromPart.backward(dy);
    auto fromCopy = run(part.detach().contiguous(), {}, dy, [&](auto& a, auto&) {
      return compositeRope(a, cos, sin, 4);
    });
    EXPECT_TRUE(torch::allclose(fromPart.detach(), fromCopy.y, tol, tol));
    EXPECT_TRUE(torch::allclose(wide.grad().narrow(-1, 32, 32), fromCopy.dx, tol, tol));
    EXPECT_EQ(wide.grad().narrow(-1, 0, 32).abs().max().item<double>(), 0.0);
    EXPECT_EQ(wide.grad().narrow(-1, 64, 32).abs().max().item<double>(), 0.0);
  }
}

TEST(FusedOps, OnlyCpuFloatTensorsTakeTheFusedPath) {
  FusedSwitchGuard guard;
  EXPECT_TRUE(model::fusedOpsApply(torch::zeros({2, 3})));
  EXPECT_TRUE(model::fusedOpsApply(torch::zeros({2, 3}, torch::kFloat64)));
  EXPECT_FALSE(model::fusedOpsApply(torch::zeros({2, 3}, torch::kBFloat16)));
  EXPECT_FALSE(model::fusedOpsApply(torch::zeros({2, 3}, torch::kFloat16)));
  kernels::setFusedKernelsEnabled(false);
  EXPECT_FALSE(model::fusedOpsApply(torch::zeros({2, 3})));
}

TEST(FusedOps, DecodersGiveTheSameLossAndGradientsWithFusedOpsOnAndOff) {
  FusedSwitchGuard guard;
  auto c = test::smallConfig(4);
  for (const auto& scheme : experiment::kSchemes) {
    SCOPED_TRACE(scheme);
    auto lossAndGrads = [&](bool fused) {
      kernels::setFusedKernelsEnabled(fused);
      torch::manual_seed(11);
      model::Decoder m(c.model, c.options, scheme);
      torch::manual_seed(12);
      auto idx = torch::randint(0, c.model.vocabSize, {3, c.model.seqLen}, torch::kInt64);
      auto loss = m->loss(idx, idx.roll(1, 1));
      loss.backward();
      std::map<std::string, torch::Tensor> g;
      for (const auto& p : m->named_parameters()) g[p.key()] = p.value().grad().clone();
      return std::make_pair(loss.item<double>(), g);
    };
    auto [lossOn, gradOn] = lossAndGrads(true);
    auto [lossOff, gradOff] = lossAndGrads(false);
    EXPECT_NEAR(lossOn, lossOff, 1e-6);
    ASSERT_EQ(gradOn.size(), gradOff.size());
    for (const auto& [name, g] : gradOn) {
      // float32 rounding, relative to the tensor's own scale: the fused path sums in another
      // order (one q/k/v and one gate/up GEMM; the fused norm's reductions)
      const double scale = gradOff[name].abs().max().item<double>();
      EXPECT_TRUE(torch::allclose(g, gradOff[name], 1e-4, 1e-5 * std::max(scale, 0.1)))
          << name << ": max difference " << (g - gradOff[name]).abs().max().item<double>()
          << " of values up to " << gradOff[name].abs().max().item<double>();
    }
  }
}

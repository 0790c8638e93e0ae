// The fused CPU RMSNorm against the composite ATen expression it replaces: forward values and
// gradients (float64 to 1e-12, float32 to float rounding), non-contiguous inputs, the folded
// LNS factor, thread-count independence; and whole decoders under every scheme trained with
// every fused path (RMSNorm, model/packed_ops.h, model/causal_attention.h) on and off.
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

TEST(FusedOps, AddRmsNormGivesTheSameBitsAsTheAddThenTheNorm) {
  // {x + r, RMSNorm(x + r)} in one function against x + r followed by the fused RMSNorm: the
  // stream, the norm and every gradient (x, r, the weight) bit for bit, in float and double,
  // with the stream's own gradient present (a block's residual) and absent (the final norm).
  for (auto dtype : {torch::kFloat32, torch::kFloat64}) {
    for (bool streamUsed : {true, false}) {
      SCOPED_TRACE(std::string(c10::toString(dtype)) + (streamUsed ? ", stream used" : ""));
      torch::manual_seed(7);
      auto opts = torch::TensorOptions().dtype(dtype);
      auto x0 = torch::randn({3, 37, 40}, opts), r0 = torch::randn({3, 37, 40}, opts);
      auto w0 = torch::rand({40}, opts) + 0.5;
      auto dy = torch::randn({3, 37, 40}, opts), ds = torch::randn({3, 37, 40}, opts);
      auto leaves = [&] {
        return std::vector<torch::Tensor>{x0.clone().requires_grad_(true),
                                          r0.clone().requires_grad_(true),
                                          w0.clone().requires_grad_(true)};
      };
      auto a = leaves(), b = leaves();
      auto [sumA, yA] = model::fusedAddRmsNorm(a[0], a[1], a[2], 1e-6, 0.25);
      auto sumB = b[0] + b[1];
      auto yB = model::fusedRmsNorm(sumB, b[2], 1e-6, 0.25);
      EXPECT_TRUE(torch::equal(sumA, sumB));
      EXPECT_TRUE(torch::equal(yA, yB));
      auto lossA = (yA * dy).sum(), lossB = (yB * dy).sum();
      if (streamUsed) {
        lossA = lossA + (sumA * ds).sum();
        lossB = lossB + (sumB * ds).sum();
      }
      lossA.backward();
      lossB.backward();
      for (int i = 0; i < 3; ++i) {
        EXPECT_TRUE(torch::equal(a[i].grad(), b[i].grad()))
            << "input " << i << ": max difference "
            << (a[i].grad() - b[i].grad()).abs().max().item<double>();
      }
    }
  }
}

TEST(FusedOps, NormAddForwardTakesTheFusedAddOnTheCpu) {
  // The block's deferred residual goes through the one-pass function when the fused ops apply,
  // and through x + r then the norm when they are off: same numbers either way.
  FusedSwitchGuard guard;
  model::Norm norm(16, 1e-6, /*layerNorm=*/false);
  auto x = torch::randn({2, 5, 16}).requires_grad_(true);
  auto r = torch::randn({2, 5, 16}).requires_grad_(true);
  auto [s1, n1] = norm->addForward(x, r, 0.5, /*intoMatmul=*/true);
  kernels::setFusedKernelsEnabled(false);
  auto [s2, n2] = norm->addForward(x, r, 0.5, /*intoMatmul=*/true);
  EXPECT_TRUE(torch::equal(s1, s2));
  EXPECT_TRUE(torch::allclose(n1, n2, 1e-5, 1e-6));
  ASSERT_TRUE(s1.grad_fn() && s2.grad_fn());
  EXPECT_NE(s1.grad_fn()->name().find("AddRmsNorm"), std::string::npos) << s1.grad_fn()->name();
  EXPECT_EQ(s2.grad_fn()->name().find("AddRmsNorm"), std::string::npos) << s2.grad_fn()->name();
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

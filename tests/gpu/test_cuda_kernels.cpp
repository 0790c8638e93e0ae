// DepthLab's CUDA kernels (model/cuda_ops.h) against the composite ATen expressions they
// replace, forward and backward, in float32 and bf16 (label `gpu`; skipped without CUDA, and
// in a build without the kernels). Also the whole decoder: loss and every gradient with the
// kernels on and off.
#include <gtest/gtest.h>

#include "model/cuda_ops.h"
#include "model/decoder.h"
#include "support/model_fixtures.h"

using namespace depthlab;

namespace {

const torch::Device kGpu(torch::kCUDA, 0);

// Runs f with the CUDA kernels switched to `on`, restoring the switch afterwards.
template <class F>
auto withKernels(bool on, F&& f) {
  const bool was = model::cudaKernelsEnabled();
  model::setCudaKernelsEnabled(on);
  struct Restore { bool was; ~Restore() { model::setCudaKernelsEnabled(was); } } restore{was};
  return f();
}

void expectClose(const torch::Tensor& a, const torch::Tensor& b, double rtol, double atol,
                 const char* what) {
  ASSERT_EQ(a.sizes(), b.sizes()) << what;
  auto af = a.to(torch::kCPU, torch::kFloat64), bf = b.to(torch::kCPU, torch::kFloat64);
  EXPECT_TRUE(torch::allclose(af, bf, rtol, atol))
      << what << ": max diff " << (af - bf).abs().max().item<double>();
}

}  // namespace

#define REQUIRE_KERNELS()                                                              \
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible to LibTorch"; \
  if (!model::cudaKernelsBuilt()) GTEST_SKIP() << "built without DepthLab's CUDA kernels"

TEST(CudaKernels, RmsNormWithLnsFactorMatchesComposite) {
  REQUIRE_KERNELS();
  for (double scale : {1.0, 1.0 / std::sqrt(7.0)}) {
    torch::manual_seed(3);
    model::Norm norm(96, 1e-6, false);
    norm->to(kGpu);
    { torch::NoGradGuard ng; norm->weight.uniform_(0.5, 1.5); }
    auto x0 = torch::randn({5, 33, 96}, kGpu) * 3;
    auto dy = torch::randn({5, 33, 96}, kGpu);
    auto run = [&](bool on) {
      return withKernels(on, [&] {
        norm->weight.mutable_grad() = torch::Tensor();
        auto x = x0.clone().requires_grad_(true);
        auto y = norm(x, scale);
        y.backward(dy);
        return std::vector<torch::Tensor>{y.detach(), x.grad(), norm->weight.grad().clone()};
      });
    };
    auto fused = run(true), composite = run(false);
    expectClose(fused[0], composite[0], 1e-5, 1e-6, "y");
    expectClose(fused[1], composite[1], 1e-4, 1e-5, "dx");
    expectClose(fused[2], composite[2], 1e-4, 1e-4, "dweight");
  }
}

TEST(CudaKernels, SwigluMatchesComposite) {
  REQUIRE_KERNELS();
  for (auto dtype : {torch::kFloat32, torch::kBFloat16}) {
    const double tol = dtype == torch::kFloat32 ? 1e-5 : 2e-2;
    torch::manual_seed(4);
    model::SwiGlu mlp(64, 160);
    mlp->to(kGpu, dtype);
    auto x0 = torch::randn({3, 17, 64}, torch::TensorOptions().device(kGpu).dtype(dtype));
    auto run = [&](bool on) {
      return withKernels(on, [&] {
        for (auto& p : mlp->parameters()) p.mutable_grad() = torch::Tensor();
        auto x = x0.clone().requires_grad_(true);
        auto y = mlp(x);
        y.pow(2).sum().backward();
        return std::vector<torch::Tensor>{y.detach(), x.grad(), mlp->gate_proj->weight.grad(),
                                          mlp->up_proj->weight.grad()};
      });
    };
    auto fused = run(true), composite = run(false);
    expectClose(fused[0], composite[0], tol, tol, "y");
    expectClose(fused[1], composite[1], tol, tol * 10, "dx");
    expectClose(fused[2], composite[2], tol, tol * 10, "dgate");
    expectClose(fused[3], composite[3], tol, tol * 10, "dup");
  }
}

TEST(CudaKernels, RopeSplitHeadsMatchesComposite) {
  REQUIRE_KERNELS();
  for (auto dtype : {torch::kFloat32, torch::kBFloat16}) {
    const double tol = dtype == torch::kFloat32 ? 1e-6 : 2e-2;
    const int64_t B = 2, T = 19, H = 3, D = 16;
    model::Rope rope(D, 32, 10000.0);
    rope.to(kGpu);
    torch::manual_seed(5);
    auto x0 = torch::randn({B, T, H * D}, torch::TensorOptions().device(kGpu).dtype(dtype));
    auto dy = torch::randn({B, H, T, D}, x0.options());
    auto run = [&](bool on) {
      return withKernels(on, [&] {
        auto x = x0.clone().requires_grad_(true);
        auto y = rope.applySplitHeads(x, H);
        y.backward(dy);
        return std::vector<torch::Tensor>{y.detach().contiguous(), x.grad()};
      });
    };
    auto fused = run(true), composite = run(false);
    expectClose(fused[0], composite[0], tol, tol, "y");
    expectClose(fused[1], composite[1], tol, tol, "dx");
  }
}

TEST(CudaKernels, CrossEntropyMatchesComposite) {
  REQUIRE_KERNELS();
  for (auto dtype : {torch::kFloat32, torch::kBFloat16}) {
    const double tol = dtype == torch::kFloat32 ? 1e-5 : 2e-2;
    for (int64_t V : {256, 32000}) {
      torch::manual_seed(6);
      auto logits0 = (torch::randn({77, V}, kGpu) * 4).to(dtype);
      auto targets = torch::randint(0, V, {77}, torch::TensorOptions().device(kGpu).dtype(torch::kInt64));
      auto fusedLogits = logits0.clone().requires_grad_(true);
      auto fused = model::cudaCrossEntropy(fusedLogits, targets);
      (fused * 3).backward();
      auto refLogits = logits0.clone().requires_grad_(true);
      auto ref = torch::nn::functional::cross_entropy(refLogits.to(torch::kFloat32), targets);
      (ref * 3).backward();
      EXPECT_EQ(fused.scalar_type(), torch::kFloat32);
      EXPECT_NEAR(fused.item<double>(), ref.item<double>(), 1e-5 * ref.item<double>());
      EXPECT_EQ(fusedLogits.grad().scalar_type(), dtype);
      expectClose(fusedLogits.grad(), refLogits.grad(), tol, 1e-6, "dlogits");
    }
  }
}

TEST(CudaKernels, DecoderLossAndGradientsMatchComposite) {
  REQUIRE_KERNELS();
  for (const char* scheme : {"pre_ln", "lns", "sandwich"}) {
    SCOPED_TRACE(scheme);
    auto c = test::smallConfig(3);
    torch::manual_seed(7);
    model::Decoder m(c, scheme);
    m->to(kGpu);
    auto x = torch::randint(0, c.model.vocabSize, {4, c.model.seqLen},
                            torch::TensorOptions().device(kGpu).dtype(torch::kInt64));
    auto y = torch::randint(0, c.model.vocabSize, {4, c.model.seqLen}, x.options());
    auto run = [&](bool on) {
      return withKernels(on, [&] {
        for (auto& p : m->parameters()) p.mutable_grad() = torch::Tensor();
        auto loss = m->loss(x, y);
        loss.backward();
        std::vector<torch::Tensor> out = {loss.detach()};
        for (auto& p : m->parameters()) out.push_back(p.grad().clone());
        return out;
      });
    };
    auto fused = run(true), composite = run(false);
    ASSERT_EQ(fused.size(), composite.size());
    expectClose(fused[0], composite[0], 1e-5, 1e-6, "loss");
    for (size_t i = 1; i < fused.size(); ++i) expectClose(fused[i], composite[i], 1e-3, 1e-5, "grad");
  }
}

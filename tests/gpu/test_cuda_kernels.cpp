// DepthLab's CUDA kernels (model/cuda_ops.h) against the composite ATen expressions they
// replace, forward and backward, in float32 and bf16 (label `gpu`; skipped without CUDA, and
// in a build without the kernels). Also the whole decoder: loss and every gradient with the
// kernels on and off.
#include <gtest/gtest.h>

#include "model/cuda_ops.h"
#include "model/decoder.h"
#include "train/autocast_scope.h"
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
  // 96: the generic kernels; 256 and 768: the warp-per-row kernels both ways; 1152: warp-per-row
  // forward, generic backward. 70 x 33 rows: more than one row per warp in the backward.
  for (int64_t C : {96, 256, 768, 1152})
  for (double scale : {1.0, 1.0 / std::sqrt(7.0)}) {
    SCOPED_TRACE("C = " + std::to_string(C) + ", scale " + std::to_string(scale));
    torch::manual_seed(3);
    model::Norm norm(C, 1e-6, false);
    norm->to(kGpu);
    { torch::NoGradGuard ng; norm->weight.uniform_(0.5, 1.5); }
    auto x0 = torch::randn({70, 33, C}, kGpu) * 3;
    auto dy = torch::randn({70, 33, C}, kGpu);
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

TEST(CudaKernels, RmsNormIntoMatmulGivesTheAutocastTypeAndGradients) {
  REQUIRE_KERNELS();
  for (int64_t C : {96, 768}) {
    SCOPED_TRACE("C = " + std::to_string(C));
    torch::manual_seed(8);
    model::Norm norm(C, 1e-6, false);
    norm->to(kGpu);
    { torch::NoGradGuard ng; norm->weight.uniform_(0.5, 1.5); }
    auto x0 = torch::randn({9, 17, C}, kGpu) * 2;
    auto w = torch::randn({C, 64}, kGpu) / std::sqrt(double(C));  // the matmul it feeds
    auto run = [&](bool on) {
      return withKernels(on, [&] {
        norm->weight.mutable_grad() = torch::Tensor();
        auto x = x0.clone().requires_grad_(true);
        torch::Tensor n, out;
        {
          train::AutocastScope autocast(true);  // bf16 on CUDA
          n = norm->forwardIntoMatmul(x, 0.5);
          out = torch::matmul(n, w);
        }
        out.to(torch::kFloat32).pow(2).sum().backward();
        return std::vector<torch::Tensor>{n.detach(), out.detach(), x.grad(),
                                          norm->weight.grad().clone()};
      });
    };
    auto fused = run(true), composite = run(false);
    EXPECT_EQ(fused[0].scalar_type(), torch::kBFloat16);  // the cast, fused
    EXPECT_EQ(composite[0].scalar_type(), torch::kFloat32);
    // bf16 rounding of values whose float32 forms may differ in the last bit (sum order).
    expectClose(fused[0], composite[0].to(torch::kBFloat16), 1e-2, 1e-2, "normed, as the matmul sees it");
    expectClose(fused[1], composite[1], 2e-2, 2e-2, "matmul output");
    expectClose(fused[2], composite[2], 1e-2, 1e-2, "dx");
    expectClose(fused[3], composite[3], 1e-2, 1e-1, "dweight");
  }
}

TEST(CudaKernels, AddRmsNormMatchesTheAddThenTheNorm) {
  REQUIRE_KERNELS();
  for (int64_t C : {96, 768, 1152})
  for (auto rtype : {torch::kFloat32, torch::kBFloat16}) {
    SCOPED_TRACE("C = " + std::to_string(C) + (rtype == torch::kFloat32 ? ", fp32" : ", bf16"));
    const bool bf16 = rtype == torch::kBFloat16;
    torch::manual_seed(10);
    model::Norm norm(C, 1e-6, false);
    norm->to(kGpu);
    { torch::NoGradGuard ng; norm->weight.uniform_(0.5, 1.5); }
    auto x0 = torch::randn({40, 33, C}, kGpu) * 2;
    auto r0 = torch::randn({40, 33, C}, kGpu).to(rtype);
    auto dsum = torch::randn({40, 33, C}, kGpu);
    auto dn = torch::randn({40, 33, C}, kGpu).to(rtype);
    auto run = [&](bool on) {
      return withKernels(on, [&] {
        norm->weight.mutable_grad() = torch::Tensor();
        auto x = x0.clone().requires_grad_(true), r = r0.clone().requires_grad_(true);
        std::pair<torch::Tensor, torch::Tensor> out;
        {
          train::AutocastScope autocast(bf16);  // bf16: the norm's output in bf16, as the residual
          out = norm->addForward(x, r, 0.25, /*intoMatmul=*/true);
        }
        torch::autograd::backward({out.first, out.second}, {dsum, dn.to(out.second.scalar_type())});
        return std::vector<torch::Tensor>{out.first.detach(), out.second.detach(), x.grad(),
                                          r.grad(), norm->weight.grad().clone()};
      });
    };
    auto fused = run(true), composite = run(false);
    EXPECT_EQ(fused[1].scalar_type(), rtype);
    EXPECT_EQ(fused[3].scalar_type(), rtype);
    const double tol = bf16 ? 1e-2 : 1e-5;
    expectClose(fused[0], composite[0], 1e-6, 1e-6, "sum");
    expectClose(fused[1], composite[1].to(rtype), tol, tol, "normed");
    expectClose(fused[2], composite[2], bf16 ? 1e-2 : 1e-4, bf16 ? 1e-2 : 1e-5, "dx");
    expectClose(fused[3], composite[3], bf16 ? 2e-2 : 1e-4, bf16 ? 2e-2 : 1e-5, "dresidual");
    expectClose(fused[4], composite[4], bf16 ? 2e-2 : 1e-4, bf16 ? 1e-1 : 1e-4, "dweight");
  }
}

TEST(CudaKernels, SwigluMatchesComposite) {
  REQUIRE_KERNELS();
  for (auto dtype : {torch::kFloat32, torch::kBFloat16}) {
    const double tol = dtype == torch::kFloat32 ? 1e-5 : 2e-2;
    torch::manual_seed(4);
    model::SwiGlu mlp(64, 160);
    mlp->to(kGpu, dtype);
    // 3 x 17 x 160 values: a multiple of 8 (the 16-byte kernel).
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

TEST(CudaKernels, SwigluOnMisalignedOrOddSizesTakesTheScalarKernel) {
  REQUIRE_KERNELS();
  torch::manual_seed(9);
  for (int64_t offset : {0, 1}) {
    for (int64_t n : {8 * 1000, 8 * 1000 + 3}) {
      SCOPED_TRACE("offset " + std::to_string(offset) + ", n " + std::to_string(n));
      auto opts = torch::TensorOptions().device(kGpu).dtype(torch::kBFloat16);
      auto g = torch::randn({n + 1}, opts).slice(0, offset, offset + n);
      auto u = torch::randn({n + 1}, opts).slice(0, offset, offset + n);
      auto h = model::cudaSwiglu(g, u);
      auto ref = torch::silu(g.to(torch::kFloat32)) * u.to(torch::kFloat32);
      expectClose(h, ref, 1e-2, 1e-2, "h");
    }
  }
}

TEST(CudaKernels, RopeSplitHeadsMatchesComposite) {
  // The scalar kernels, and the 16-byte vector ones where D/2 holds whole vectors (D = 16 and
  // 64; D = 12 falls back to the scalar kernels with the switch on).
  REQUIRE_KERNELS();
  const bool vectorWas = model::cudaRopeVectorLoads();
  for (bool vector : {false, true})
    for (int64_t D : {16, 12, 64})
      for (auto dtype : {torch::kFloat32, torch::kBFloat16}) {
        SCOPED_TRACE(::testing::Message()
                     << "vector " << vector << " D " << D << " dtype " << dtype);
        model::setCudaRopeVectorLoads(vector);
        ASSERT_EQ(model::cudaRopeVectorLoads(), vector);
        const double tol = dtype == torch::kFloat32 ? 1e-6 : 2e-2;
        const int64_t B = 2, T = 19, H = 3;
        model::Rope rope(D, 32, 10000.0);
        rope.to(kGpu);
        torch::manual_seed(5);
        auto x0 = torch::randn({B, T, H * D}, torch::TensorOptions().device(kGpu).dtype(dtype));
        auto dy = torch::randn({B, H, T, D}, x0.options());
        // The same gradient laid out (B, T, H, D), as attention's backward may hand it over.
        auto dyStrided = dy.transpose(1, 2).contiguous().transpose(1, 2);
        ASSERT_FALSE(dyStrided.is_contiguous());
        auto run = [&](bool on, const torch::Tensor& g) {
          return withKernels(on, [&] {
            auto x = x0.clone().requires_grad_(true);
            auto y = rope.applySplitHeads(x, H);
            y.backward(g);
            return std::vector<torch::Tensor>{y.detach().contiguous(), x.grad()};
          });
        };
        auto fused = run(true, dy), composite = run(false, dy), strided = run(true, dyStrided);
        expectClose(fused[0], composite[0], tol, tol, "y");
        expectClose(fused[1], composite[1], tol, tol, "dx");
        expectClose(strided[1], composite[1], tol, tol, "dx from a strided gradient");
      }
  model::setCudaRopeVectorLoads(vectorWas);
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
    model::Decoder m(c.model, c.options, scheme);
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
    // Under bf16 autocast (norm outputs straight in bf16): the same loss to bf16 precision, and
    // gradients that point the same way.
    auto runBf16 = [&](bool on) {
      train::AutocastScope autocast(true);
      return run(on);
    };
    auto fusedBf16 = runBf16(true), compositeBf16 = runBf16(false);
    expectClose(fusedBf16[0], compositeBf16[0], 1e-2, 1e-3, "bf16 loss");
    for (size_t i = 1; i < fusedBf16.size(); ++i) {
      const auto a = fusedBf16[i].flatten().to(torch::kFloat64), b = compositeBf16[i].flatten().to(torch::kFloat64);
      const double cosine = (a * b).sum().item<double>() / (a.norm() * b.norm()).item<double>();
      if (b.norm().item<double>() > 0) {
        EXPECT_GT(cosine, 0.99) << "bf16 gradient " << i;
      }
    }
  }
}

// GPU check (ctest label `gpu`) of every scheme's forward and backward, with and without
// options.qkNorm, and of DyT's LayerNorm form: the same weights give the same logits and the
// same gradients on CUDA as on the CPU in fp32. Skips, saying why, without a CUDA device (Debian's
// CPU-only libtorch; torch2 on a machine without a GPU). Training losses per scheme are compared
// in test_cuda_training.cpp; this file checks the pieces a loss can hide (each gradient, the
// norms' weights, DyT's alphas and the embedding scalar drawn at random so none sits at its init).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "experiment/experiment_config.h"
#include "model/decoder.h"
#include "support/gpu_fixtures.h"
#include "support/model_fixtures.h"

using namespace depthlab;

namespace {

using test::kGpu;

/// Max |a - b| over max(1, max |a|): a relative error that tolerates near-zero entries.
double relDiff(const torch::Tensor& a, const torch::Tensor& b) {
  auto ac = a.detach().to(torch::kCPU, torch::kFloat64),
       bc = b.detach().to(torch::kCPU, torch::kFloat64);
  return (ac - bc).abs().max().item<double>() / std::max(1.0, ac.abs().max().item<double>());
}

/// One scheme on both devices: logits of a batch, then the gradient of every parameter.
void expectSameOnBothDevices(const experiment::ExperimentConfig& c, const std::string& scheme) {
  torch::manual_seed(11);
  model::Decoder cpu(c.model, c.options, scheme), gpu(c.model, c.options, scheme);
  {
    torch::NoGradGuard ng;
    for (auto& p : cpu->parameters()) {
      if (p.dim() <= 1) p.uniform_(0.5, 1.5);  // norm weights, DyT alphas, embed_scale
    }
    auto from = cpu->named_parameters();
    for (auto& kv : gpu->named_parameters()) kv.value().copy_(from[kv.key()]);
  }
  gpu->to(kGpu);
  auto idx = torch::randint(0, c.model.vocabSize, {2, c.model.seqLen}, torch::kInt64);
  auto target = torch::randint(0, c.model.vocabSize, {2 * c.model.seqLen}, torch::kInt64);
  auto lossOf = [&](model::Decoder& m, torch::Device dev, torch::Tensor* logits) {
    *logits = m->forward(idx.to(dev));  // (B, T, V)
    return torch::nn::functional::cross_entropy(logits->reshape({-1, c.model.vocabSize}),
                                                target.to(dev));
  };
  torch::Tensor lc, lg;
  lossOf(cpu, torch::kCPU, &lc).backward();
  lossOf(gpu, kGpu, &lg).backward();
  EXPECT_LT(relDiff(lc, lg), 1e-4) << "logits";
  auto gpuParams = gpu->named_parameters();
  for (auto& kv : cpu->named_parameters()) {
    const auto& g = gpuParams[kv.key()].grad();
    ASSERT_TRUE(kv.value().grad().defined() && g.defined()) << kv.key();
    EXPECT_LT(relDiff(kv.value().grad(), g), 1e-3) << kv.key();
  }
}

}  // namespace

TEST(CudaSchemeParity, EverySchemeWithAndWithoutQkNormGivesTheCpuLogitsAndGradients) {
  REQUIRE_CUDA();
  for (bool qkNorm : {false, true}) {
    for (const auto& scheme : experiment::kSchemes) {
      SCOPED_TRACE(scheme + (qkNorm ? " qkNorm" : ""));
      auto c = test::smallConfig(4);
      c.model.embedStd = 1.0;
      c.options.qkNorm = qkNorm;
      expectSameOnBothDevices(c, scheme);
    }
  }
}

TEST(CudaSchemeParity, DytWithLayerNormBiasGivesTheCpuLogitsAndGradients) {
  REQUIRE_CUDA();
  auto c = test::smallConfig(4);
  c.model.norm = "layernorm";
  for (const char* scheme : {"dyt", "dyt_lns"}) {
    SCOPED_TRACE(scheme);
    expectSameOnBothDevices(c, scheme);
  }
}

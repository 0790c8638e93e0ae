// GPU checks (ctest label `gpu`): skipped, saying why, where LibTorch sees no CUDA device
// (always with Debian's CPU-only libtorch). With an upstream CUDA LibTorch: the same tiny
// model gives the same first losses on CUDA as on CPU (fp32), bf16 autocast trains, and
// checkpoints move between devices.
#include <gtest/gtest.h>

#include "data/token_dataset.h"
#include "support/model_fixtures.h"
#include "support/temp_dir.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

using namespace depthlab;

namespace {
data::TokenDataset makeData(const experiment::ExperimentConfig& c) {
  return data::TokenDataset(test::patternTokens(20000, c.model.vocabSize), c.model.vocabSize, 0.1,
                            c.model.seqLen, c.optim.batchSize);
}
}  // namespace

TEST(Cuda, SameLossesAsCpuInFp32) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible to LibTorch";
  auto c = test::smallConfig(4);
  auto data = makeData(c);
  train::Trainer cpu(c, "lns", torch::kCPU), gpu(c, "lns", torch::Device(torch::kCUDA, 0));
  for (int s = 0; s < 5; ++s) {
    EXPECT_NEAR(cpu.trainStep(data, s).loss, gpu.trainStep(data, s).loss, 1e-3) << "step " << s;
  }
}

TEST(Cuda, Bf16AutocastTrains) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible to LibTorch";
  auto c = test::smallConfig(4);
  c.run.bf16 = true;
  auto data = makeData(c);
  train::Trainer t(c, "pre_ln", torch::Device(torch::kCUDA, 0));
  double first = t.trainStep(data, 0).loss, last = first;
  for (int s = 1; s < 30; ++s) last = t.trainStep(data, s).loss;
  EXPECT_TRUE(std::isfinite(last));
  EXPECT_LT(last, first);
}

TEST(Cuda, CheckpointsMoveBetweenDevices) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible to LibTorch";
  test::TempDir dir;
  auto c = test::smallConfig(2);
  train::Trainer gpu(c, "lns", torch::Device(torch::kCUDA, 0));
  train::saveCheckpoint(dir.file("ck"), gpu.model(), &gpu.optimizer(), {1, "lns", {}, 0});
  train::Trainer cpu(c, "lns", torch::kCPU);
  EXPECT_NO_THROW(train::loadCheckpoint(dir.file("ck"), cpu.model(), &cpu.optimizer(), torch::kCPU));
}

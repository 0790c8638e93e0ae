// Micro-batch choice: the largest divisor of the global batch that fits, the global batch kept,
// nothing done on the CPU or when the config does not ask (the GPU side: tests/gpu).
#include <gtest/gtest.h>

#include <vector>

#include "data/token_dataset.h"
#include "experiment/micro_batch.h"
#include "support/model_fixtures.h"

using namespace depthlab;

TEST(MicroBatch, LargestDivisorThatFits) {
  std::vector<int> tried;
  auto fitsUpTo = [&](int limit) {
    return [&tried, limit](int b) {
      tried.push_back(b);
      return b <= limit;
    };
  };
  EXPECT_EQ(experiment::largestFittingMicroBatch(512, 512, fitsUpTo(100)), 64);
  EXPECT_EQ(tried, (std::vector<int>{512, 256, 128, 64}));  // divisors only, largest first
  tried.clear();
  EXPECT_EQ(experiment::largestFittingMicroBatch(24, 10, fitsUpTo(1000)), 8);  // capped by maxMicro
  EXPECT_EQ(experiment::largestFittingMicroBatch(7, 7, fitsUpTo(3)), 1);
  EXPECT_THROW(experiment::largestFittingMicroBatch(8, 8, fitsUpTo(0)), std::runtime_error);
}

TEST(MicroBatch, NothingChangesOnTheCpuOrWhenNotAsked) {
  auto c = test::smallConfig(2);
  c.optim.batchSize = 4;
  c.optim.gradAccum = 3;
  c.optim.autoMicroBatch = true;
  EXPECT_EQ(experiment::chooseMicroBatch(c, torch::kCPU), "");
  EXPECT_EQ(c.optim.batchSize, 4);
  EXPECT_EQ(c.optim.gradAccum, 3);
}

TEST(MicroBatch, AnUpdateOfASmallModelFitsOnTheCpu) {
  auto c = test::smallConfig(2);
  c.schemes = {"pre_ln", "lns"};
  EXPECT_TRUE(experiment::updateFits(c, c.schemes, torch::kCPU, 4));
}

TEST(MicroBatch, ATrialBelowTheGlobalBatchAccumulatesAsTheRealUpdateWill) {
  // A global batch of 8 tried at 4: the trial update runs two micro-batches (on a GPU, both
  // CUDA graphs get captured); it fits on the CPU, and the config it was given is unchanged.
  auto c = test::smallConfig(2);
  c.schemes = {"pre_ln", "lns"};
  c.optim.batchSize = 8;
  c.optim.gradAccum = 1;
  EXPECT_TRUE(experiment::updateFits(c, c.schemes, torch::kCPU, 4));
  EXPECT_EQ(c.optim.batchSize, 8);
  EXPECT_EQ(c.optim.gradAccum, 1);
}

TEST(MicroBatch, TheChoiceIsPartOfTheStoredConfig) {
  auto c = test::smallConfig(2);
  c.optim.autoMicroBatch = true;
  auto back = experiment::configFromJson(experiment::toJson(c));
  EXPECT_TRUE(back.optim.autoMicroBatch);
}

TEST(MicroBatch, TheChosenSplitKeepsTheGlobalBatchAndTheValidationWindows) {
  // The paper presets: 64 x 8, validation 32 batches of 64 = 2048 windows. A GPU that takes
  // 512 at once validates on 4 batches of 512: the same 2048 windows, not 32 x 512.
  auto c = test::smallConfig(2);
  c.optim.batchSize = 64;
  c.optim.gradAccum = 8;
  c.run.evalBatches = 32;
  auto chosen = c;
  experiment::applyMicroBatch(chosen, 512);
  EXPECT_EQ(chosen.optim.batchSize, 512);
  EXPECT_EQ(chosen.optim.gradAccum, 1);
  EXPECT_EQ(chosen.run.evalBatches, 4);
  std::vector<int32_t> tokens(300000);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>((i * 7919) % 256);
  const int T = 16;
  data::TokenDataset asked(tokens, 256, 0.2, T, c.optim.batchSize);
  data::TokenDataset split(tokens, 256, 0.2, T, chosen.optim.batchSize);
  std::vector<int64_t> want, got;
  for (int i = 0; i < c.run.evalBatches; ++i) {
    auto b = asked.valBatch(i, c.run.evalBatches);
    want.insert(want.end(), b.inputs.begin(), b.inputs.end());
  }
  for (int i = 0; i < chosen.run.evalBatches; ++i) {
    auto b = split.valBatch(i, chosen.run.evalBatches);
    got.insert(got.end(), b.inputs.begin(), b.inputs.end());
  }
  EXPECT_EQ(got, want);

  // 64 x 8 at 128: 4 accumulation steps, 16 validation batches; at 48 (no divisor): refused.
  auto smaller = c;
  experiment::applyMicroBatch(smaller, 128);
  EXPECT_EQ(smaller.optim.gradAccum, 4);
  EXPECT_EQ(smaller.run.evalBatches, 16);
  EXPECT_THROW(experiment::applyMicroBatch(smaller, 48), std::invalid_argument);
  // Validation off stays off.
  auto none = c;
  none.run.evalBatches = 0;
  experiment::applyMicroBatch(none, 256);
  EXPECT_EQ(none.run.evalBatches, 0);
}

// Micro-batch choice: the largest divisor of the global batch that fits, the global batch kept,
// nothing done on the CPU or when the config does not ask (the GPU side: tests/gpu).
#include <gtest/gtest.h>

#include <vector>

#include "support/model_fixtures.h"
#include "experiment/micro_batch.h"

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

// The effective-depth ratio (Hu et al.'s logit-lens criterion) and the final-block jump strength
// from per-layer values given by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "probes/depth_summaries.h"

using namespace depthlab;

TEST(DepthSummaries, TheEffectiveDepthIsTheFirstBlockBelowATenthOfTheLargestKl) {
  // Largest 4.0: the first block under 0.4 is the 3rd of 5.
  EXPECT_DOUBLE_EQ(probes::effectiveDepthRatio({3.0f, 4.0f, 0.39f, 0.1f, 0.0f}), 3.0 / 5);
  // Exactly a tenth is not below it.
  EXPECT_DOUBLE_EQ(probes::effectiveDepthRatio({4.0f, 0.4f, 0.5f, 0.0f}), 1.0);
  // The last block's 0 alone: the prediction forms at the end.
  EXPECT_DOUBLE_EQ(probes::effectiveDepthRatio({2.0f, 2.0f, 1.0f, 0.0f}), 1.0);
  EXPECT_DOUBLE_EQ(probes::effectiveDepthRatio({0.01f, 5.0f, 0.0f}), 1.0 / 3);
  EXPECT_DOUBLE_EQ(probes::effectiveDepthRatio({NAN, 2.0f, 0.1f, 0.0f}), 3.0 / 4);
  EXPECT_TRUE(std::isnan(probes::effectiveDepthRatio({})));
  EXPECT_TRUE(std::isnan(probes::effectiveDepthRatio({NAN, NAN})));
}

TEST(DepthSummaries, TheJumpIsTheLastBlocksAngularStepOverTheMiddleBlocks) {
  // Middle blocks 2..4 of 5: mean 0.1; the first block's large step does not count.
  EXPECT_NEAR(probes::jumpStrength({0.9f, 0.05f, 0.1f, 0.15f, 0.4f}), 4.0, 1e-6);
  EXPECT_NEAR(probes::jumpStrength({0.2f, 0.2f, 0.2f}), 1.0, 1e-6);
  EXPECT_TRUE(std::isnan(probes::jumpStrength({0.2f, 0.3f})));
  EXPECT_TRUE(std::isnan(probes::jumpStrength({0.2f, 0.0f, 0.3f})));
}

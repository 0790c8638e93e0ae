// The paper's schedule: linear warm-up, cosine to 10% of peak.
#include <gtest/gtest.h>

#include "train/lr_schedule.h"

using depthlab::train::lrMultiplier;

TEST(LrSchedule, WarmupIsLinear) {
  EXPECT_DOUBLE_EQ(lrMultiplier(0, 100, 1000, 0.1), 0.0);
  EXPECT_DOUBLE_EQ(lrMultiplier(50, 100, 1000, 0.1), 0.5);
  EXPECT_DOUBLE_EQ(lrMultiplier(99, 100, 1000, 0.1), 0.99);
}

TEST(LrSchedule, PeakAtWarmupEndFloorAtTheEnd) {
  EXPECT_DOUBLE_EQ(lrMultiplier(100, 100, 1000, 0.1), 1.0);
  EXPECT_NEAR(lrMultiplier(550, 100, 1000, 0.1), 0.55, 1e-12);  // half-way down the cosine
  EXPECT_NEAR(lrMultiplier(1000, 100, 1000, 0.1), 0.1, 1e-12);
  EXPECT_NEAR(lrMultiplier(5000, 100, 1000, 0.1), 0.1, 1e-12);  // stays at the floor
  EXPECT_NEAR(lrMultiplier(1000, 100, 1000, 0.0), 0.0, 1e-12);
}

TEST(LrSchedule, NoWarmupStartsAtPeak) {
  EXPECT_DOUBLE_EQ(lrMultiplier(0, 0, 10, 0.1), 1.0);
  EXPECT_DOUBLE_EQ(lrMultiplier(7, 0, 10, 1.0), 1.0);  // constant when the floor is the peak
}

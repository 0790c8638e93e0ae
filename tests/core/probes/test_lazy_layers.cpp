// Lazy-layer counts: the classes by the run's thresholds, which come from its probe config.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "probes/lazy_layers.h"

using namespace depthlab;

TEST(LazyLayers, ClassesByTheDefaultThresholds) {
  auto c = probes::classifyLayers({0.01f, 0.05f, 0.1f, 0.2f, 0.9f}, probes::LayerThresholds{});
  EXPECT_EQ(c.lazy, 1);
  EXPECT_EQ(c.low, 2);
  EXPECT_EQ(c.effective, 2);
}

TEST(LazyLayers, ThresholdsComeFromTheRunsConfig) {
  probes::ProbeConfig config;
  config.lazyThreshold = 0.1;
  config.lowThreshold = 0.3;
  const auto t = probes::layerThresholds(config);
  EXPECT_DOUBLE_EQ(t.lazy, 0.1);
  EXPECT_DOUBLE_EQ(t.low, 0.3);
  auto c = probes::classifyLayers({0.01f, 0.07f, 0.15f, 0.25f, 0.9f}, t);
  EXPECT_EQ(c.lazy, 2);  // 0.07 is lazy at 0.1, not at the default 0.05
  EXPECT_EQ(c.low, 2);
  EXPECT_EQ(c.effective, 1);
}

TEST(LazyLayers, UnmeasuredLayersCountInNoClass) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto c = probes::classifyLayers({nan, 0.01f, 0.5f}, probes::LayerThresholds{});
  EXPECT_EQ(c.lazy + c.low + c.effective, 2);
}

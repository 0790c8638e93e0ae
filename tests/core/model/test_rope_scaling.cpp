// Rope scaling (model/rope_scaling.h): the default keeps DepthLab's own tables bit for bit (its
// training runs do not move), and the scaled frequencies follow transformers' formulas at the
// points that pin them down (llama3's unchanged high and divided low frequencies, linear's
// division, longrope's two sets and attention factor on cos/sin). The parity tests of
// tests/core/hf compare whole models with transformers.
#include <gtest/gtest.h>

#include <cmath>

#include "model/layers.h"
#include "model/rope_scaling.h"

using namespace depthlab;

TEST(RopeScaling, DefaultAndDynamicKeepTheUnscaledTablesBitForBit) {
  model::Rope plain(16, 32, 10000.0);
  auto x = torch::randn({2, 4, 32, 16});  // (B, H, T, D)
  for (const char* type : {"default", "dynamic"}) {
    model::RopeScaling s;
    s.type = type;
    s.factor = 4.0;
    model::Rope scaled(16, 32, 10000.0, s);
    EXPECT_TRUE(torch::equal(plain.apply(x), scaled.apply(x))) << type;
  }
}

TEST(RopeScaling, FrequenciesFollowTransformersFormulas) {
  const auto plain = model::ropeInverseFrequencies({}, 128, 500000.0);  // (64)
  model::RopeScaling l3;  // Llama 3.1
  l3.type = "llama3";
  l3.factor = 8.0;
  l3.originalMaxPositions = 8192;
  const auto f = model::ropeInverseFrequencies(l3, 128, 500000.0);
  ASSERT_EQ(f.size(), 64u);
  EXPECT_DOUBLE_EQ(f[0], plain[0]);           // wavelength 2 pi < 8192 / 4: unchanged
  EXPECT_DOUBLE_EQ(f[63], plain[63] / 8.0);   // wavelength > 8192: divided by the factor
  for (size_t i = 0; i < f.size(); ++i) {
    EXPECT_LE(f[i], plain[i] * (1 + 1e-15));  // in between: blended, never above
    EXPECT_GE(f[i], plain[i] / 8.0 * (1 - 1e-15));
  }
  model::RopeScaling linear;
  linear.type = "linear";
  linear.factor = 2.0;
  EXPECT_DOUBLE_EQ(model::ropeInverseFrequencies(linear, 128, 500000.0)[5], plain[5] / 2.0);
}

TEST(RopeScaling, LongropeSwitchesFactorsPastItsOriginalContextAndScalesCosSin) {
  model::RopeScaling s;
  s.type = "longrope";
  s.originalMaxPositions = 8;
  s.shortFactor = {1, 1, 1, 1};
  s.longFactor = {2, 2, 2, 2};
  s.attentionFactor = 1.5;
  model::Rope rope(8, 32, 100.0, s);
  model::Rope plain(8, 32, 100.0);
  auto x = torch::randn({1, 1, 8, 8});  // 8 positions: the short factors (here: none)
  EXPECT_TRUE(torch::allclose(rope.apply(x), plain.apply(x) * 1.5, 1e-6, 1e-6));
  auto y = torch::randn({1, 1, 9, 8});  // 9 > 8: the long factors
  EXPECT_FALSE(torch::allclose(rope.apply(y), plain.apply(y) * 1.5, 1e-3, 1e-3));
  // Position 0 has angle 0 whatever the factors: cos = 1.5, sin = 0.
  EXPECT_TRUE(torch::allclose(rope.apply(y).select(2, 0), y.select(2, 0) * 1.5, 1e-6, 1e-6));
}

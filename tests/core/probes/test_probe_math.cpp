// Known answers for the probe measurements.
#include <gtest/gtest.h>

#include <cmath>

#include "probes/probe_math.h"

using namespace depthlab::probes;

TEST(AngularDistance, KnownAngles) {
  auto a = torch::tensor({{1.0f, 0.0f}, {1.0f, 2.0f}, {3.0f, 0.0f}, {1.0f, 1.0f}});
  auto b = torch::tensor({{1.0f, 0.0f}, {-2.0f, -4.0f}, {0.0f, 5.0f}, {0.0f, 1.0f}});
  auto d = angularDistance(a, b);
  EXPECT_NEAR(d[0].item<float>(), 0.0f, 1e-6);   // identical direction
  EXPECT_NEAR(d[1].item<float>(), 1.0f, 1e-6);   // opposite
  EXPECT_NEAR(d[2].item<float>(), 0.5f, 1e-6);   // orthogonal
  EXPECT_NEAR(d[3].item<float>(), 0.25f, 1e-6);  // 45 degrees
}

TEST(AngularDistance, ZeroVectorsGiveNoNaN) {
  auto a = torch::tensor({{0.0f, 0.0f}, {0.0f, 0.0f}, {1.0f, 1.0f}});
  auto b = torch::tensor({{0.0f, 0.0f}, {1.0f, 0.0f}, {0.0f, 0.0f}});
  auto d = angularDistance(a, b);
  EXPECT_FALSE(torch::isnan(d).any().item<bool>());
  EXPECT_FLOAT_EQ(d[0].item<float>(), 0.0f);
  EXPECT_FLOAT_EQ(d[1].item<float>(), 0.5f);
  EXPECT_FLOAT_EQ(d[2].item<float>(), 0.5f);
}

TEST(ProbeMath, VarianceAndEffectivenessByHand) {
  auto x = torch::tensor({1.0f, 2.0f, 3.0f, 4.0f});
  EXPECT_NEAR(elementVariance(x), 1.25, 1e-12);  // population variance
  auto prev = torch::tensor({1.0f, 0.0f});
  auto h = torch::tensor({1.0f, 2.0f});
  EXPECT_NEAR(layerEffectiveness(prev, h), 4.0 / 5.0, 1e-12);
  EXPECT_EQ(layerEffectiveness(prev, torch::zeros({2})), 0.0);
  EXPECT_EQ(layerEffectiveness(h, h), 0.0);
}

TEST(ProbeMath, BlockInfluenceByHand) {
  // cos = 1 and cos = 0 -> mean 0.5 -> BI 0.5
  auto in = torch::tensor({{1.0f, 0.0f}, {1.0f, 0.0f}});
  auto out = torch::tensor({{2.0f, 0.0f}, {0.0f, 3.0f}});
  EXPECT_NEAR(blockInfluence(in, out), 0.5, 1e-6);
  EXPECT_NEAR(blockInfluence(in, in), 0.0, 1e-6);
  EXPECT_NEAR(blockInfluence(in, -in), 2.0, 1e-6);
}

TEST(ProbeMath, TokenSelection) {
  auto x = torch::arange(24, torch::kFloat32).view({2, 3, 4});
  EXPECT_EQ(tokens(x, false).sizes(), (std::vector<int64_t>{6, 4}));
  auto last = tokens(x, true);
  EXPECT_EQ(last.sizes(), (std::vector<int64_t>{2, 4}));
  EXPECT_FLOAT_EQ(last[1][0].item<float>(), 20.0f);
}

TEST(ProbeMath, PairedDifferenceMeanAndStandardErrorByHand) {
  const double pruned[] = {3.0, 4.0, 5.0, 6.0}, full[] = {2.0, 2.0, 2.0, 2.0};
  const auto d = pairedDifference(pruned, full, 4);  // deltas 1, 2, 3, 4
  EXPECT_NEAR(d.mean, 2.5, 1e-15);
  // sample sd = sqrt((2.25 + 0.25 + 0.25 + 2.25) / 3); / sqrt(4)
  EXPECT_NEAR(d.standardError, std::sqrt(5.0 / 3.0) / 2.0, 1e-15);
  const double same[] = {7.0, 7.0};
  EXPECT_EQ(pairedDifference(same, same, 2).standardError, 0.0);  // identical deltas
  const auto one = pairedDifference(pruned, full, 1);
  EXPECT_NEAR(one.mean, 1.0, 1e-15);
  EXPECT_TRUE(std::isnan(one.standardError));  // no spread from one sequence
  EXPECT_TRUE(std::isnan(pairedDifference(pruned, full, 0).mean));
}

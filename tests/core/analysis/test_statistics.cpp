// Known answers for the comparison statistics.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/statistics.h"

using namespace depthlab::analysis;

TEST(Statistics, Summary) {
  auto s = summarize({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
  EXPECT_NEAR(s.std, 2.138089935, 1e-9);  // sample standard deviation
  EXPECT_NEAR(s.se, 2.138089935 / std::sqrt(8.0), 1e-9);
  EXPECT_EQ(s.min, 2);
  EXPECT_EQ(s.max, 9);
  EXPECT_EQ(summarize({}).n, 0);
}

TEST(Statistics, StudentTKnownValues) {
  // t = 2.228 with 10 df is the two-sided 5% point; t = 1.96 with huge df ~ normal.
  EXPECT_NEAR(studentTwoSidedP(2.228138852, 10), 0.05, 1e-6);
  EXPECT_NEAR(studentTwoSidedP(1.959963985, 1e7), 0.05, 1e-5);
  EXPECT_NEAR(studentTwoSidedP(0, 5), 1.0, 1e-12);
  EXPECT_NEAR(studentTwoSidedP(12.7062047, 1), 0.05, 1e-6);
}

TEST(Statistics, WelchMatchesAHandComputation) {
  // Reference computed independently (Python: Welch's formulas, and the two-sided p-value by
  // numerically integrating the t density): t = -3.7397, df = 5.6980, p = 0.010580.
  std::vector<double> a = {1.90, 1.95, 1.92, 1.88};
  std::vector<double> b = {1.99, 2.05, 2.01, 1.96};
  auto r = welchTTest(a, b);
  EXPECT_NEAR(r.meanDiff, -0.09, 1e-12);
  const double va = summarize(a).std * summarize(a).std / 4, vb = summarize(b).std * summarize(b).std / 4;
  EXPECT_NEAR(r.t, -0.09 / std::sqrt(va + vb), 1e-12);
  EXPECT_NEAR(r.df, (va + vb) * (va + vb) / (va * va / 3 + vb * vb / 3), 1e-9);
  EXPECT_NEAR(r.t, -3.7397341, 1e-6);
  EXPECT_NEAR(r.df, 5.6980093, 1e-6);
  EXPECT_NEAR(r.p, 0.0105796, 1e-6);
  EXPECT_THROW(welchTTest({1.0}, {1.0, 2.0}), std::invalid_argument);
}

TEST(Statistics, BootstrapIntervalContainsTheDifference) {
  std::vector<double> a = {1.90, 1.95, 1.92, 1.88, 1.91};
  std::vector<double> b = {1.99, 2.05, 2.01, 1.96, 2.02};
  auto ci = bootstrapMeanDiff(a, b, 0.95, 4000, 7);
  EXPECT_LT(ci.low, -0.09);
  EXPECT_GT(ci.high, -0.09);
  EXPECT_LT(ci.high, 0);  // clearly separated groups
  auto again = bootstrapMeanDiff(a, b, 0.95, 4000, 7);
  EXPECT_EQ(ci.low, again.low);
}

TEST(Statistics, RelativeDepth) {
  auto r = toRelativeDepth({1, 2, 3, 4}, 8);  // layers at 0.25, 0.5, 0.75, 1.0
  EXPECT_DOUBLE_EQ(r[1], 1.0);   // 0.25 -> layer 1
  EXPECT_DOUBLE_EQ(r[2], 1.5);   // 0.375 -> between layers 1 and 2
  EXPECT_DOUBLE_EQ(r[7], 4.0);   // 1.0 -> last layer
  EXPECT_EQ(toRelativeDepth({}, 3).size(), 3u);
}

TEST(Statistics, StudentPValuesHoldInTheTailsAndForLargeDegreesOfFreedom) {
  // Boost.Math's students_t. The retyped Numerical Recipes continued fraction stopped after 300
  // terms, too few for large df; with df = 1e12, t is normal to ~1e-12.
  for (double z : {0.5, 1.959963984540054, 4.0, 6.0}) {
    const double normal = std::erfc(z / std::sqrt(2.0));
    EXPECT_NEAR(studentTwoSidedP(z, 1e12) / normal, 1.0, 1e-8) << z;
    EXPECT_NEAR(studentTwoSidedP(-z, 1e12) / normal, 1.0, 1e-8) << z;
  }
  // One degree of freedom is the Cauchy distribution: p = 1 - 2 atan(|t|) / pi.
  for (double t : {0.1, 1.0, 30.0, 1e6}) {
    EXPECT_NEAR(studentTwoSidedP(t, 1) / (2 * std::atan(1 / t) / M_PI), 1.0, 1e-12) << t;
  }
  EXPECT_TRUE(std::isnan(studentTwoSidedP(1.0, 0)));
}

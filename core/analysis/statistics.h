// Statistics for comparing runs: mean / std / standard error / min-max of seed groups,
// Welch's t-test and a bootstrap interval for the difference of two groups' means, and
// linear resampling of a per-layer profile onto relative depth. Pure functions, no torch.
#pragma once

#include <cstdint>
#include <vector>

namespace depthlab::analysis {

struct Summary {
  int n = 0;
  double mean = 0, std = 0, se = 0, min = 0, max = 0;  // std: sample (n-1) standard deviation
};
Summary summarize(const std::vector<double>& x);

struct WelchResult {
  double t = 0, df = 0, p = 1;  // two-sided p-value
  double meanDiff = 0;          // mean(a) - mean(b)
};
/// Welch's unequal-variance t-test; needs at least 2 values in each group.
WelchResult welchTTest(const std::vector<double>& a, const std::vector<double>& b);
/// Two-sided p-value of Student's t with `df` degrees of freedom at |t| (Boost.Math's
/// students_t; NaN for df <= 0).
double studentTwoSidedP(double t, double df);

struct Interval { double low = 0, high = 0; };
/// Percentile bootstrap interval of mean(a) - mean(b) at `level` (e.g. 0.95), deterministic
/// for a given seed.
Interval bootstrapMeanDiff(const std::vector<double>& a, const std::vector<double>& b,
                           double level = 0.95, int resamples = 10000, uint64_t seed = 1);

/// Resamples a per-layer profile (L values, layer l at relative depth (l+1)/L) onto `points`
/// evenly spaced relative depths in (0, 1], by linear interpolation.
std::vector<double> toRelativeDepth(const std::vector<double>& profile, int points);

}  // namespace depthlab::analysis

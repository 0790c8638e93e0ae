// Weight spectra: the power-law fit equals WeightWatcher's method written out plainly (every
// candidate x_min, its maximum-likelihood alpha, the KS distance, the least one), recovers the
// exponent of Pareto samples, leaves out eigenvalues at the floor; the stable rank of a matrix of
// known singular values; and a decoder's spectra cover every projection of every block.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>

#include "probes/weight_spectra.h"
#include "support/model_fixtures.h"

using namespace depthlab;

namespace {

// WeightWatcher's WWFit.fit_power_law + argmin, as its Python reads (pow, not logs).
probes::PowerLawFit plainFit(std::vector<double> x) {
  std::vector<double> kept;
  for (double v : x)
    if (v > probes::kSpectrumFloor) kept.push_back(v);
  std::sort(kept.begin(), kept.end());
  const size_t n = kept.size();
  probes::PowerLawFit best;
  double bestD = 1e300;
  for (size_t i = 0; i + 1 < n; ++i) {
    const double m = static_cast<double>(n - i);
    double logSum = 0;
    for (size_t j = i; j < n; ++j) logSum += std::log(kept[j]);
    const double alpha = 1 + m / (logSum - m * std::log(kept[i]));
    double d = 1;
    if (alpha > 1) {
      d = 0;
      for (size_t j = i; j < n; ++j) {
        const double cdf = 1 - std::pow(kept[j] / kept[i], -alpha + 1);
        d = std::max(d, std::abs(cdf - static_cast<double>(j - i) / m));
      }
    }
    if (d < bestD) {
      bestD = d;
      best.alpha = alpha;
      best.xmin = kept[i];
      best.ksDistance = d;
      best.tail = static_cast<int>(n - i);
    }
  }
  return best;
}

std::vector<double> pareto(double alpha, double xmin, int n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> x;
  for (int i = 0; i < n; ++i) x.push_back(xmin * std::pow(1.0 - u(rng), -1.0 / (alpha - 1.0)));
  return x;
}

}  // namespace

TEST(WeightSpectra, TheFitIsWeightWatchersMethodAndFindsAParetoExponent) {
  auto x = pareto(2.5, 0.3, 1500, 4);
  // A bulk below the tail, as an ESD has: the fit must choose its x_min above it.
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> bulk(0.01, 0.3);
  for (int i = 0; i < 1500; ++i) x.push_back(bulk(rng));
  x.push_back(1e-7);  // at the floor: left out
  const auto got = probes::fitPowerLaw(x);
  const auto want = plainFit(x);
  EXPECT_NEAR(got.alpha, want.alpha, 1e-9 * want.alpha);
  EXPECT_DOUBLE_EQ(got.xmin, want.xmin);
  EXPECT_NEAR(got.ksDistance, want.ksDistance, 1e-9);
  EXPECT_EQ(got.tail, want.tail);
  EXPECT_NEAR(got.alpha, 2.5, 0.15);
  EXPECT_GE(got.xmin, 0.2);  // in the tail, not in the bulk
  EXPECT_TRUE(std::isnan(probes::fitPowerLaw({1.0}).alpha));
  std::vector<double> floored(25, 1e-9);  // 24 at the floor: one eigenvalue left
  floored.back() = 2.0;
  EXPECT_TRUE(std::isnan(probes::fitPowerLaw(floored).alpha));
}

TEST(WeightSpectra, TheStableRankOfKnownSingularValues) {
  // Q1 diag(3, 2, 1) Q2^T: eigenvalues of W^T W 9, 4, 1 -> (9 + 4 + 1) / 9.
  torch::manual_seed(2);
  auto q1 = std::get<0>(torch::linalg_qr(torch::randn({5, 3}, torch::kFloat64)));
  auto q2 = std::get<0>(torch::linalg_qr(torch::randn({3, 3}, torch::kFloat64)));
  auto w = torch::matmul(q1 * torch::tensor({3.0, 2.0, 1.0}, torch::kFloat64), q2.t());  // (5, 3)
  const auto s = probes::spectrumOf("w", w.to(torch::kFloat32));
  EXPECT_NEAR(s.stableRank, 14.0 / 9.0, 1e-5);
  EXPECT_EQ(s.rows, 5);
  EXPECT_EQ(s.cols, 3);
  EXPECT_TRUE(std::isnan(s.fit.alpha));  // three eigenvalues: too few to fit a tail
  // From kMinFitEigenvalues on, a fit.
  EXPECT_TRUE(std::isnan(probes::fitPowerLaw(pareto(2.5, 1.0, 19, 1)).alpha));
  EXPECT_TRUE(std::isfinite(probes::fitPowerLaw(pareto(2.5, 1.0, 20, 1)).alpha));
}

TEST(WeightSpectra, EveryProjectionOfEveryBlock) {
  auto c = test::smallConfig(3);
  torch::manual_seed(5);
  model::Decoder m(c.model, c.options, "pre_ln");
  const auto s = probes::weightSpectra(m);
  ASSERT_EQ(s.alpha.size(), 3u);
  ASSERT_EQ(s.blocks.size(), 3u);
  double sum = 0;
  int n = 0;
  for (size_t l = 0; l < 3; ++l) {
    std::set<std::string> names;
    double mean = 0;
    for (const auto& matrix : s.blocks[l]) {
      names.insert(matrix.name);
      EXPECT_TRUE(std::isfinite(matrix.fit.alpha)) << matrix.name;
      EXPECT_GT(matrix.stableRank, 1.0) << matrix.name;
      mean += matrix.fit.alpha;
      sum += matrix.fit.alpha;
      ++n;
    }
    EXPECT_EQ(names, (std::set<std::string>{"self_attn.q_proj.weight", "self_attn.k_proj.weight",
                                            "self_attn.v_proj.weight", "self_attn.o_proj.weight",
                                            "mlp.gate_proj.weight", "mlp.up_proj.weight",
                                            "mlp.down_proj.weight"}));
    EXPECT_NEAR(s.alpha[l], mean / static_cast<double>(s.blocks[l].size()), 1e-5);
  }
  EXPECT_NEAR(s.meanAlpha, sum / n, 1e-9);
}

// See statistics.h.
#include "analysis/statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

#include <boost/math/distributions/students_t.hpp>

namespace depthlab::analysis {

Summary summarize(const std::vector<double>& x) {
  Summary s;
  s.n = static_cast<int>(x.size());
  if (x.empty()) return s;
  double sum = 0;
  s.min = s.max = x[0];
  for (double v : x) {
    sum += v;
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
  }
  s.mean = sum / s.n;
  if (s.n > 1) {
    double ss = 0;
    for (double v : x) ss += (v - s.mean) * (v - s.mean);
    s.std = std::sqrt(ss / (s.n - 1));
    s.se = s.std / std::sqrt(static_cast<double>(s.n));
  }
  return s;
}

double studentTwoSidedP(double t, double df) {
  if (!std::isfinite(t)) return 0;
  if (!(df > 0)) return std::numeric_limits<double>::quiet_NaN();
  // Boost.Math's Student t: 2 * P(T > |t|), computed as a complement (no 1 - x cancellation).
  const boost::math::students_t dist(df);
  return std::min(1.0, 2 * boost::math::cdf(boost::math::complement(dist, std::abs(t))));
}

WelchResult welchTTest(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 2 || b.size() < 2) throw std::invalid_argument("Welch's t-test needs at least 2 values per group");
  auto sa = summarize(a), sb = summarize(b);
  const double va = sa.std * sa.std / sa.n, vb = sb.std * sb.std / sb.n;
  WelchResult r;
  r.meanDiff = sa.mean - sb.mean;
  if (va + vb == 0) {
    r.t = r.meanDiff == 0 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), r.meanDiff);
    r.df = sa.n + sb.n - 2;
    r.p = r.meanDiff == 0 ? 1 : 0;
    return r;
  }
  r.t = r.meanDiff / std::sqrt(va + vb);
  r.df = (va + vb) * (va + vb) / (va * va / (sa.n - 1) + vb * vb / (sb.n - 1));
  r.p = studentTwoSidedP(r.t, r.df);
  return r;
}

Interval bootstrapMeanDiff(const std::vector<double>& a, const std::vector<double>& b, double level,
                           int resamples, uint64_t seed) {
  if (a.empty() || b.empty()) throw std::invalid_argument("bootstrap needs values in both groups");
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pa(0, a.size() - 1), pb(0, b.size() - 1);
  std::vector<double> diffs(static_cast<size_t>(resamples));
  for (auto& d : diffs) {
    double sa = 0, sb = 0;
    for (size_t i = 0; i < a.size(); ++i) sa += a[pa(rng)];
    for (size_t i = 0; i < b.size(); ++i) sb += b[pb(rng)];
    d = sa / a.size() - sb / b.size();
  }
  std::sort(diffs.begin(), diffs.end());
  const double alpha = (1 - level) / 2;
  auto at = [&](double q) { return diffs[static_cast<size_t>(std::clamp(q * (resamples - 1), 0.0, resamples - 1.0))]; };
  return {at(alpha), at(1 - alpha)};
}

std::vector<double> toRelativeDepth(const std::vector<double>& profile, int points) {
  std::vector<double> out(static_cast<size_t>(points));
  const int L = static_cast<int>(profile.size());
  if (L == 0) return out;
  for (int i = 0; i < points; ++i) {
    const double rel = static_cast<double>(i + 1) / points;  // (0, 1]
    const double pos = rel * L - 1;                           // fractional 0-based layer
    if (pos <= 0) { out[static_cast<size_t>(i)] = profile[0]; continue; }
    const int lo = std::min(static_cast<int>(std::floor(pos)), L - 1);
    const int hi = std::min(lo + 1, L - 1);
    const double f = pos - lo;
    out[static_cast<size_t>(i)] = profile[static_cast<size_t>(lo)] * (1 - f) + profile[static_cast<size_t>(hi)] * f;
  }
  return out;
}

}  // namespace depthlab::analysis

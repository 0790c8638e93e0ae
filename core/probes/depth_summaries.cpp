// See depth_summaries.h.
#include "probes/depth_summaries.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace depthlab::probes {

double effectiveDepthRatio(const std::vector<float>& kl) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  double largest = -1;
  for (float v : kl) {
    if (std::isfinite(v)) largest = std::max(largest, static_cast<double>(v));
  }
  if (kl.empty() || largest < 0) return nan;
  const size_t L = kl.size();
  for (size_t l = 0; l + 1 < L; ++l) {
    if (std::isfinite(kl[l]) && kl[l] < kEffectiveDepthKlShare * largest) {
      return static_cast<double>(l + 1) / static_cast<double>(L);
    }
  }
  return 1.0;
}

double jumpStrength(const std::vector<float>& adjacent) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const size_t L = adjacent.size();
  if (L < 3) return nan;
  double sum = 0;
  for (size_t l = 1; l + 1 < L; ++l) sum += adjacent[l];
  const double middle = sum / static_cast<double>(L - 2);
  if (!(middle > 0) || !std::isfinite(adjacent.back())) return nan;
  return adjacent.back() / middle;
}

}  // namespace depthlab::probes

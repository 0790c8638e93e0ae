// See lr_schedule.h.
#include "train/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace depthlab::train {

double lrMultiplier(int64_t step, int64_t warmup, int64_t total, double minRatio) {
  if (step < warmup) return static_cast<double>(step) / static_cast<double>(warmup);
  if (total <= warmup) return 1.0;
  const double progress = std::min(1.0, static_cast<double>(step - warmup) /
                                            static_cast<double>(total - warmup));
  return minRatio + (1.0 - minRatio) * 0.5 * (1.0 + std::cos(M_PI * progress));
}

}  // namespace depthlab::train

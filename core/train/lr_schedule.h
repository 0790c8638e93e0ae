// Learning-rate schedule of the paper's code: linear warm-up, then cosine to minRatio * peak.
//   m(t) = t / warmup                                          for t < warmup
//   m(t) = min + (1 - min) * (1 + cos(pi * (t - warmup) / (total - warmup))) / 2   after
// t is the 0-based update index; m(warmup) = 1 and m(total) = minRatio.
#pragma once

#include <cstdint>

namespace depthlab::train {

double lrMultiplier(int64_t step, int64_t warmup, int64_t total, double minRatio);

}  // namespace depthlab::train

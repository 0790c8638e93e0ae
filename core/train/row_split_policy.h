// How many threads the row split (train/row_split.h) deals an update's rows over: no torch,
// so the resource estimate can count the memory it takes.
#pragma once

#include <algorithm>
#include <cstdint>

namespace depthlab::train {

/// At most this much memory in the workers' extra gradient copies (each worker past the first
/// holds one until they are summed); past it the row split uses fewer threads.
constexpr double kRowSplitCopyBytes = 1024.0 * 1024.0 * 1024.0;

/// Workers for `threads` intra-op threads, micro-batches of `rows` rows and `gradientBytes` of
/// gradients (4 bytes a float32 parameter): one per thread, no more than rows, and no more
/// copies than kRowSplitCopyBytes holds. 1 means the per-op path.
inline int rowSplitWorkers(int threads, int64_t rows, double gradientBytes) {
  const double copies = gradientBytes > 0 ? kRowSplitCopyBytes / gradientBytes : threads;
  const int byMemory = 1 + static_cast<int>(std::min<double>(copies, threads));
  return static_cast<int>(std::max<int64_t>(
      1, std::min<int64_t>({static_cast<int64_t>(threads), rows, static_cast<int64_t>(byMemory)})));
}

/// Bytes of gradient copies the row split keeps beside the ordinary gradients.
inline double rowSplitExtraBytes(int threads, int64_t rows, double gradientBytes) {
  return (rowSplitWorkers(threads, rows, gradientBytes) - 1) * gradientBytes;
}

}  // namespace depthlab::train

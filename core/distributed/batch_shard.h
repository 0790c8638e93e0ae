// Which part of every global batch a data-parallel rank trains on. A global batch is
// `gradAccum` micro-batches of `batchSize` sequences (what the config says, whatever the number
// of ranks). When the ranks divide gradAccum, rank r takes whole micro-batches r, r+N, ...;
// otherwise, when they divide the micro-batch, it takes rows [r B/N, (r+1) B/N) of every one.
// Either way every rank holds the same number of equally weighted micro-batches of equal size,
// so the mean of the ranks' mean gradients is the single-process gradient. Pure arithmetic.
#pragma once

#include <string>
#include <vector>

namespace depthlab::distributed {

struct BatchShard {
  int micro = 0;              // global micro-batch index
  int rowBegin = 0, rowEnd = 0;  // rows of it, [begin, end)
};

/// The shards of rank `rank` of `world`, in order. Throws std::runtime_error saying how to
/// fix the config when the global batch does not split evenly.
std::vector<BatchShard> rankShards(int batchSize, int gradAccum, int rank, int world);

/// "" when rankShards would succeed, else the reason (for config checks before a launch).
std::string shardProblem(int batchSize, int gradAccum, int world);

}  // namespace depthlab::distributed

// Batch shards; see batch_shard.h.
#include "distributed/batch_shard.h"

#include <stdexcept>

namespace depthlab::distributed {

std::string shardProblem(int batchSize, int gradAccum, int world) {
  if (world < 1) return "the number of ranks must be at least 1";
  if (world == 1 || gradAccum % world == 0 || batchSize % world == 0) return "";
  return "the global batch of " + std::to_string(batchSize * gradAccum) + " sequences (" +
         std::to_string(gradAccum) + " micro-batch(es) of " + std::to_string(batchSize) +
         ") does not split evenly over " + std::to_string(world) +
         " ranks: make the gradient accumulation or the micro-batch a multiple of " +
         std::to_string(world);
}

std::vector<BatchShard> rankShards(int batchSize, int gradAccum, int rank, int world) {
  if (auto why = shardProblem(batchSize, gradAccum, world); !why.empty()) {
    throw std::runtime_error(why);
  }
  if (rank < 0 || rank >= world) throw std::runtime_error("rank outside [0, world)");
  std::vector<BatchShard> out;
  if (gradAccum % world == 0) {
    for (int i = rank; i < gradAccum; i += world) out.push_back({i, 0, batchSize});
  } else {
    const int rows = batchSize / world;
    for (int i = 0; i < gradAccum; ++i) out.push_back({i, rank * rows, (rank + 1) * rows});
  }
  return out;
}

}  // namespace depthlab::distributed

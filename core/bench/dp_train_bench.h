// `depthlab-cli bench train --nproc N`: tokens/s of data-parallel training, for the scaling
// efficiency (tokens/s at N ranks over N times one rank). Weak scaling: every rank trains the
// benchmark's micro-batch, so N ranks train N times the tokens of one per update. The CLI runs
// the one-rank timing in its own process and the N ranks as a launched group.
#pragma once

#include <string>

#include "experiment/experiment_config.h"

namespace depthlab::distributed {
class DistContext;
}

namespace depthlab::bench {

struct DataParallelBenchResult {
  double tokensPerSecond = 0;  // all ranks together, measured on rank 0
  int ranks = 1, steps = 0, threads = 1;
  std::string backend, device;
};

/// Times `steps` updates (after 3 warm-up ones) of `scheme` on random tokens (trainBenchConfig's
/// config, a different batch per rank) on `device`; `dist` nullptr: one process.
DataParallelBenchResult runDataParallelBench(const experiment::ExperimentConfig& config,
                                             const std::string& scheme, int steps, int threads,
                                             const std::string& device,
                                             distributed::DistContext* dist, double bucketMB = 25);

}  // namespace depthlab::bench

// What one update of a config costs on this machine's device, measured rather than estimated:
// a trainer of the config's shape on random tokens, a warm-up update, then timed ones; on a CPU
// with fewer rows than the config's micro-batch (its time scaled linearly), so a paper-size
// model is timed in seconds. For the cost said before a long launch (experiment/reproduction);
// the run loop times its own first update besides (experiment/run_cost).
#pragma once

#include <string>

#include "experiment/experiment_config.h"

namespace depthlab::experiment {

struct MeasuredUpdate {
  double seconds = 0;       // one update of the config: micro-batch x gradient accumulation
  int rowsTimed = 0;        // sequences per timed micro-batch
  double timedSeconds = 0;  // the median timed micro-batch update
};

/// Times `scheme` under `c` on c.run.device; `maxRows` caps the sequences of the timed
/// micro-batch (0: the config's). Throws what building the model throws (memory, device).
MeasuredUpdate measureUpdate(const ExperimentConfig& c, const std::string& scheme, int maxRows = 0);

}  // namespace depthlab::experiment

// What a run will cost before it starts: parameters, memory (weights, gradients, Adam moments
// and the activations kept for the backward pass) and a rough time, from the config alone. The
// set-up panel shows it; the run loop refuses a group whose estimate exceeds the memory the
// device has (RAM for the CPU, free GPU memory for CUDA), naming the estimate. No torch here.
#pragma once

#include <cstdint>
#include <string>

#include "experiment/experiment_config.h"

namespace depthlab::experiment {

struct RunEstimate {
  int64_t params = 0;
  double memoryMB = 0;   // one model training
  double seconds = 0;    // rough: ~45 GFLOP/s on one CPU thread, ~5 TFLOP/s on a GPU
};

RunEstimate estimateRun(const ExperimentConfig& c, const std::string& scheme);

/// Memory the machine can give a new process now (MemAvailable), in MB; 0 when unknown.
double availableMemoryMB();

/// Throws ConfigError when the group (all its schemes' models at once) cannot fit in
/// `availableMB` (0 = unknown: nothing is refused), naming the estimate and the limit.
void requireFits(const ExperimentConfig& c, double availableMB, const std::string& where);

}  // namespace depthlab::experiment

// What a run will cost before it starts: parameters, memory (weights, gradients, Adam moments
// and the activations kept for the backward pass) and a rough time, from the config alone. The
// set-up panel shows it; the run loop refuses a group whose estimate exceeds the memory the
// device has (RAM for the CPU, free GPU memory for CUDA), naming the estimate. No torch here.
#pragma once

#include <cstdint>
#include <string>

#include "experiment/experiment_config.h"
#include "store/store_types.h"

namespace depthlab::experiment {

struct RunEstimate {
  int64_t params = 0;
  double memoryMB = 0;   // one model training
  double seconds = 0;    // rough: ~45 GFLOP/s on one CPU thread, ~5 TFLOP/s on a GPU
};

/// How long groups really took on this machine relative to their estimate: the median of
/// (measured wall time / estimate) over the newest finished groups of one device kind.
struct TimeCalibration {
  double factor = 1.0;  // multiplies the FLOP-rate estimate
  int groups = 0;       // finished groups it comes from (0: uncalibrated)
};

/// `runs`: the store's runs (any order). Groups of `deviceKind` ("cpu" or "cuda") only.
TimeCalibration calibrateTime(const std::vector<store::RunInfo>& runs, const std::string& deviceKind,
                              int newestGroups = 10);

RunEstimate estimateRun(const ExperimentConfig& c, const std::string& scheme,
                        const TimeCalibration& calibration = {});

/// "8 s", "2.5 min", "1.3 h": a duration at the precision an estimate deserves.
std::string formatDuration(double seconds);

/// Memory the machine can give a new process now (MemAvailable), in MB; 0 when unknown.
double availableMemoryMB();

/// Throws ConfigError when the group (all its schemes' models at once) cannot fit in
/// `availableMB` (0 = unknown: nothing is refused), naming the estimate and the limit.
void requireFits(const ExperimentConfig& c, double availableMB, const std::string& where);

}  // namespace depthlab::experiment

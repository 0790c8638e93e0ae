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
  double memoryMB = 0;   // one model training: the three parts below together
  double parameterMB = 0, activationMB = 0, probeMB = 0;  // weights, gradients and moments;
                         // a micro-batch's activations; the probes' pass over the probe batch
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

/// Training FLOPs per token of `scheme` at `c`'s shape: ~6 per parameter plus attention.
double trainingFlopsPerToken(const ExperimentConfig& c, const std::string& scheme);

/// The lab's measured rate on one NVIDIA H200 (docs/performance.md, `bench train --device
/// cuda`: LLaMA-130M, bf16, 668,878 tokens/s), as tokens per second of the LLaMA-130M preset.
inline constexpr double kH200TokensPerSecond130M = 668878;
/// Seconds `c`'s scheme would train (all its updates) on one H200: its FLOPs at the FLOP rate
/// that measurement makes of trainingFlopsPerToken. An estimate for planning, not a promise.
double h200Seconds(const ExperimentConfig& c, const std::string& scheme);

/// "8 s", "2.5 min", "1.3 h": a duration at the precision an estimate deserves.
std::string formatDuration(double seconds);

/// Memory the machine can give a new process now (MemAvailable), in MB; 0 when unknown.
double availableMemoryMB();

/// Throws ConfigError when the group (all its schemes' models at once) cannot fit in
/// `availableMB` (0 = unknown: nothing is refused), naming the estimate, the limit and the
/// fields that make the largest part of it.
void requireFits(const ExperimentConfig& c, double availableMB, const std::string& where);

}  // namespace depthlab::experiment

// `depthlab-cli bench train` on the CPU: the C++ trainer against the PyTorch references
// (Debian's 1.13 and the newest from the torch2 environment), in one or more rounds. A round
// times the C++ trainer and then each reference back to back; with several rounds the ratios
// reported are the medians of the rounds' own ratios, so a slow stretch of a shared host moves
// one round, not the verdict. Prints a table or emits JSON; does not touch the GPU path.
#pragma once

#include <string>

#include "experiment/experiment_config.h"

namespace depthlab::cli {

struct CpuTrainBenchArgs {
  std::string preset, scheme;
  int steps = 20, threads = 1, rounds = 1;
  bool fusedKernels = true, rowSplit = true, cppOnly = false;
};

/// Runs the rounds on `config` (the preset with the command line's overrides) and reports them.
void runCpuTrainBench(const CpuTrainBenchArgs& a, const experiment::ExperimentConfig& config,
                      const std::string& referenceScript, bool json);

}  // namespace depthlab::cli

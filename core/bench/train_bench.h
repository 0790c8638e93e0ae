// `depthlab-cli bench train`: tokens/s of the C++ trainer and of the PyTorch reference
// (bench/reference_model.py bench) on the same model, batch, dtype and threads.
#pragma once

#include <optional>
#include <string>

#include "experiment/experiment_config.h"

namespace depthlab::bench {

struct TrainBenchResult {
  double cppTokensPerSecond = 0;
  std::optional<double> torchTokensPerSecond;  // absent when Python's torch is missing
  std::string torchMessage;                    // why it is absent, or the command's error
  int steps = 0, threads = 1;
  bool fusedKernels = true;                    // C++ side ran with the fused CPU kernels
  double cppPageFaultsPerStep = 0;             // minor page faults per timed C++ update
  double cppResidentMb = 0;                    // this process's resident set after them
};

/// Times `steps` updates (after 3 warm-up updates) of `scheme` on random tokens.
/// `referenceScript` is bench/reference_model.py. `fusedKernels` false times the C++ trainer
/// on the composite ATen / torch::optim path (kernels::setFusedKernelsEnabled), for an A/B.
/// Both sides inherit this process's environment (OMP_WAIT_POLICY included).
TrainBenchResult runTrainBench(const experiment::ExperimentConfig& config, const std::string& scheme,
                               int steps, int threads, const std::string& referenceScript,
                               bool fusedKernels = true);

}  // namespace depthlab::bench

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
};

/// Times `steps` updates (after 3 warm-up updates) of `scheme` on random tokens.
/// `referenceScript` is bench/reference_model.py.
TrainBenchResult runTrainBench(const experiment::ExperimentConfig& config, const std::string& scheme,
                               int steps, int threads, const std::string& referenceScript);

}  // namespace depthlab::bench

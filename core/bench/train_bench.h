// `depthlab-cli bench train` on CPU: tokens/s of the C++ trainer on random tokens, its page
// faults and resident memory. The PyTorch reference it is compared with runs out of process,
// driven by the CLI (app/cli/bench_baselines.h) on trainBenchConfig()'s config.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "experiment/experiment_config.h"

namespace depthlab::bench {

struct TrainBenchResult {
  double cppTokensPerSecond = 0;
  std::optional<double> torchTokensPerSecond;  // filled by the CLI; absent without Python's torch
  std::string torchVersion;                    // Debian's, e.g. "1.13.0"
  std::string torchMessage;                    // why it is absent, or the command's error
  std::vector<double> torchStepMs;             // its timed updates, when the script reports them
  std::string torchOpenBlasCore;               // OPENBLAS_CORETYPE the CLI set for it (only a
                                               // build with no OpenBLAS of its own does)
  // The same reference under the newest PyTorch at hand (pip's, in the torch2 configuration's
  // private environment), timed in the same run; absent when that environment is not there.
  std::optional<double> newestTorchTokensPerSecond;
  std::string newestTorchVersion, newestTorchMessage;
  std::vector<double> newestTorchStepMs;
  // The dense products of one update timed alone (bench/update_gemms.h), each side under its
  // own BLAS: how much of a ratio is the BLAS library. 0 / absent: not measured.
  double cppGemmMs = 0;
  std::string cppBlas;
  std::optional<double> torchGemmMs, newestTorchGemmMs;
  std::string torchBlas, newestTorchBlas;
  int steps = 0, threads = 1;
  bool fusedKernels = true;                    // C++ side ran with the fused CPU kernels
  bool rowSplit = true;                        // ... and with train/row_split on 2+ threads
  double cppPageFaultsPerStep = 0;             // minor page faults per timed C++ update
  double cppResidentMb = 0;                    // this process's resident set after them
  std::vector<double> stepMs;                  // every timed C++ update, in order (its spread:
                                               // noise, or a slow mode lasting a whole run)
};

/// The config both sides of the comparison run: byte vocabulary, one micro-batch, constant lr.
experiment::ExperimentConfig trainBenchConfig(const experiment::ExperimentConfig& config);
/// Times `steps` updates (after 3 warm-up updates) of `scheme` on random tokens with
/// trainBenchConfig(config). `fusedKernels` false times the composite ATen / torch::optim path
/// (kernels::setFusedKernelsEnabled), `rowSplit` false splits every op over the threads
/// (Trainer::setRowSplit), each for an A/B.
TrainBenchResult runTrainBench(const experiment::ExperimentConfig& config, const std::string& scheme,
                               int steps, int threads, bool fusedKernels = true,
                               bool rowSplit = true);

}  // namespace depthlab::bench

// `depthlab-cli bench train --device cuda`: tokens/s of the C++ trainer on a CUDA GPU at a
// preset's shape (its micro-batch, accumulation, sequence and bf16 setting; byte vocabulary),
// the model FLOPs that means and MFU against the device's bf16 peak. The Hugging Face baseline
// on the same shape (bench/hf_llama_bench.py, eager and torch.compile) runs out of process,
// driven by the CLI (app/cli/bench_baselines.h), which fills hfEager / hfCompile.
// Measures only; prints nothing.
#pragma once

#include <optional>
#include <string>

#include "experiment/experiment_config.h"

namespace depthlab::bench {

struct GpuTrainBenchResult {
  std::string device;                 // "cuda:0 NVIDIA H200"
  int steps = 0;                      // timed optimizer updates
  int64_t tokensPerUpdate = 0;        // micro-batch x accumulation x sequence
  bool cudaKernels = false;           // DepthLab's CUDA kernels were on
  bool fusedResidual = false;         // ... with the residual adds fused into the norms
  bool cudaGraphs = false;            // forward and backward replayed from CUDA graphs
  std::string cudaGraphsError;        // why the graphs were turned off mid-run (empty: they were not)
  double tokensPerSecond = 0;
  double flopsPerToken = 0;           // model FLOPs (forward + backward), see flopsPerToken()
  double tflops = 0;                  // achieved
  std::optional<double> peakTflops;   // the device's dense bf16 peak this MFU is measured against
  std::optional<double> mfu;          // tflops / peakTflops
  double usedMemoryGb = 0;            // device memory in use after the timed updates (caching allocator included)
  std::optional<double> hfEager, hfCompile;  // Hugging Face tokens/s
  std::string hfMessage;              // why the baseline is missing, or its torch version
  std::string profileMessage;         // where the trace went, or why there is none
};

/// 6 x (weights that multiply per token) + 6 x L x T x d (causal attention), per token, forward
/// and backward: the count PaLM's MFU uses, and hf_llama_bench.py.
double flopsPerToken(const experiment::ModelConfig& m);
/// Dense bf16 peak in TFLOP/s for a known device name; nullopt for others.
std::optional<double> bf16PeakTflops(const std::string& deviceName);

struct GpuTrainBenchOptions {
  std::string device = "cuda";
  int steps = 20;            // timed optimizer updates (after 3 warm-up updates)
  double peakTflops = 0;     // > 0 overrides bf16PeakTflops()
  bool cudaKernels = false;  // DepthLab's CUDA kernels on for the timing (else the switch as is:
                             // on by default, DEPTHLAB_CUDA_KERNELS=0 off)
  int cudaGraphs = -1;       // 1 / 0: CUDA graphs on / off for the timing; -1: the trainer's
                             // default (on; DEPTHLAB_CUDA_GRAPHS=0 off)
  bool fusedKernels = true;  // false: composite ATen ops and torch::optim's step (an A/B)
  std::string profilePath;   // non-empty: after the timing, 2 more updates under LibTorch's
                             // Kineto profiler, saved there as a Chrome trace (LibTorch 2.x)
};

/// The config the benchmark (and the baseline) runs: the preset's, with byte tokens.
experiment::ExperimentConfig gpuTrainBenchConfig(const experiment::ExperimentConfig& config);
/// The switches are process-wide: set for the timing, restored however this returns.
GpuTrainBenchResult runGpuTrainBench(const experiment::ExperimentConfig& config,
                                     const std::string& scheme, const GpuTrainBenchOptions& o);

}  // namespace depthlab::bench

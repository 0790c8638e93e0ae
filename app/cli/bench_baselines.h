// The baselines `depthlab-cli bench train` compares DepthLab with, each run out of process:
// the PyTorch reference model (bench/reference_model.py under Debian's /usr/bin/python3, CPU)
// and Hugging Face transformers (bench/hf_llama_bench.py, eager and torch.compile, CUDA). They
// fill the baseline fields of the core benchmarks' results; the product library (core/) never
// starts Python itself. Reasons for a missing baseline go into the result's message.
#pragma once

#include <string>

#include "bench/gpu_train_bench.h"
#include "bench/train_bench.h"

namespace depthlab::cli {

/// The PyTorch reference on `config` (bench::trainBenchConfig's), same scheme, steps, threads:
/// under Debian's PyTorch (/usr/bin/python3, 1.13) and, when the torch2 configuration's private
/// environment exists, under that newest PyTorch too. `gemmShapesJson` non-empty: each also
/// times those products alone under its BLAS (bench/update_gemms.h), into the *GemmMs fields.
void runTorchReference(bench::TrainBenchResult& r, const experiment::ExperimentConfig& config,
                       const std::string& scheme, int steps, int threads, const std::string& script,
                       const std::string& gemmShapesJson = "");
/// The Hugging Face baseline on `config` (bench::gpuTrainBenchConfig's); `script` empty skips it.
/// `python` "" means $DEPTHLAB_PYTHON, else python3.
void runHfBaseline(bench::GpuTrainBenchResult& r, const experiment::ExperimentConfig& config,
                   const std::string& script, std::string python);

}  // namespace depthlab::cli

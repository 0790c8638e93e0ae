// See gpu_train_bench.h.
#include "bench/gpu_train_bench.h"

#include <torch/torch.h>

#include <chrono>

#include "kernels/cpu_kernels.h"
#include "model/cuda_ops.h"
#include "train/devices.h"
#include "train/trainer.h"

#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/autograd/profiler_kineto.h>
#endif

namespace depthlab::bench {

double flopsPerToken(const experiment::ModelConfig& m) {
  const double d = m.dModel, f = m.dFF, L = m.nLayers, V = m.vocabSize, T = m.seqLen;
  const double weights = L * (4 * d * d + 3 * d * f) + V * d;
  return 6 * weights + 6 * L * T * d;
}

std::optional<double> bf16PeakTflops(const std::string& name) {
  // H100 / H200: the dense bf16 GEMM rate measured on the lab's H200 (~790; spec sheet 989),
  // which the project's MFU targets use. Others: NVIDIA's dense (non-sparse) bf16 figures.
  struct Row { const char* key; double tflops; };
  static const Row table[] = {{"H200", 790}, {"H100", 790}, {"GH200", 790}, {"A100", 312},
                              {"A10G", 70},  {"L40S", 362}, {"L4", 121},    {"4090", 165},
                              {"3090", 71}};
  for (const auto& r : table) {
    if (name.find(r.key) != std::string::npos) return r.tflops;
  }
  return std::nullopt;
}

namespace {

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Two updates under the Kineto profiler (CPU ops and CUDA kernels), saved as a Chrome trace
// (bench/summarize_trace.py reads it). Returns what happened, for the report.
template <class Step>
std::string profileUpdates(const std::string& path, Step&& step) {
#if TORCH_VERSION_MAJOR >= 2
  namespace prof = torch::autograd::profiler;
  using torch::profiler::impl::ActivityType;
  const torch::profiler::impl::ProfilerConfig config(torch::profiler::impl::ProfilerState::KINETO);
  const std::set<ActivityType> activities{ActivityType::CPU, ActivityType::CUDA};
  prof::prepareProfiler(config, activities);
  prof::enableProfiler(config, activities);
  step();
  step();
  auto result = prof::disableProfiler();
  result->save(path);
  return "2 updates profiled: " + path;
#else
  (void)step;
  return "profiling needs LibTorch 2.x; no trace written to " + path;
#endif
}

}  // namespace

experiment::ExperimentConfig gpuTrainBenchConfig(const experiment::ExperimentConfig& input) {
  experiment::ExperimentConfig c = input;
  c.model.vocabSize = 256;  // byte tokens, as the baseline
  return c;
}

GpuTrainBenchResult runGpuTrainBench(const experiment::ExperimentConfig& input,
                                     const std::string& scheme, const GpuTrainBenchOptions& o) {
  const torch::Device device = train::resolveDevice(o.device);
  struct Switches {
    bool fused = kernels::fusedKernelsEnabled(), cuda = model::cudaKernelsEnabled();
    ~Switches() {
      kernels::setFusedKernelsEnabled(fused);
      model::setCudaKernelsEnabled(cuda);
    }
  } restore;
  kernels::setFusedKernelsEnabled(o.fusedKernels);
  if (o.cudaKernels) model::setCudaKernelsEnabled(true);
  const int steps = o.steps;
  const experiment::ExperimentConfig c = gpuTrainBenchConfig(input);
  GpuTrainBenchResult r;
  r.steps = steps;
  r.cudaKernels = model::cudaKernelsEnabled() && model::cudaKernelsBuilt() && o.fusedKernels;
  r.fusedResidual = r.cudaKernels && model::cudaResidualFusionEnabled();
  r.tokensPerUpdate = static_cast<int64_t>(c.optim.batchSize) * c.optim.gradAccum * c.model.seqLen;
  const std::string name = train::cudaDeviceName(device.index());
  r.device = train::describeDevice(device) + (name.empty() ? "" : " " + name);

  // Random tokens, the same batch every update (timing does not depend on the text).
  torch::manual_seed(1);
  auto tokens = torch::randint(0, c.model.vocabSize, {c.optim.batchSize, c.model.seqLen + 1},
                               torch::kInt64).contiguous();
  data::TokenBatch batch;
  batch.batch = c.optim.batchSize;
  batch.seqLen = c.model.seqLen;
  const int64_t* p = tokens.data_ptr<int64_t>();
  for (int64_t b = 0; b < batch.batch; ++b) {
    batch.inputs.insert(batch.inputs.end(), p + b * (batch.seqLen + 1), p + b * (batch.seqLen + 1) + batch.seqLen);
    batch.targets.insert(batch.targets.end(), p + b * (batch.seqLen + 1) + 1, p + (b + 1) * (batch.seqLen + 1));
  }
  const std::vector<data::TokenBatch> micro(static_cast<size_t>(c.optim.gradAccum), batch);
  {
    train::Trainer t(experiment::trainerConfig(c), scheme, device);
    if (o.cudaGraphs >= 0) t.setCudaGraphs(o.cudaGraphs == 1);
    for (int s = 0; s < 3; ++s) t.trainStepOn(micro, s);  // warm-up: allocator, cuBLAS plans
    torch::cuda::synchronize(device.index());
    const double t0 = seconds();
    for (int s = 0; s < steps; ++s) t.trainStepOn(micro, s + 3);
    torch::cuda::synchronize(device.index());
    const double dt = seconds() - t0;
    r.tokensPerSecond = static_cast<double>(r.tokensPerUpdate) * steps / dt;
    r.cudaGraphs = t.cudaGraphs() && t.cudaGraphReplays() > 0;
    r.cudaGraphsError = t.cudaGraphsError();
    const auto mem = train::cudaMemory(device.index());
    r.usedMemoryGb = (mem.second - mem.first) / 1073741824.0;
    if (!o.profilePath.empty()) {
      int s = steps + 3;
      r.profileMessage = profileUpdates(o.profilePath, [&] {
        t.trainStepOn(micro, s++);
        torch::cuda::synchronize(device.index());
      });
    }
  }
  r.flopsPerToken = flopsPerToken(c.model);
  r.tflops = r.tokensPerSecond * r.flopsPerToken / 1e12;
  r.peakTflops = o.peakTflops > 0 ? std::optional<double>(o.peakTflops) : bf16PeakTflops(name);
  if (r.peakTflops) r.mfu = r.tflops / *r.peakTflops;
  return r;
}

}  // namespace depthlab::bench

// See train_bench.h.
#include "bench/train_bench.h"

#include <torch/torch.h>

#include <chrono>
#include <sys/resource.h>

#include <fstream>

#include "kernels/cpu_kernels.h"
#include "train/trainer.h"

namespace depthlab::bench {

namespace {

long minorFaults() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

double residentMb() {  // VmRSS from /proc/self/status; 0 where there is no /proc
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

}  // namespace


experiment::ExperimentConfig trainBenchConfig(const experiment::ExperimentConfig& input) {
  experiment::ExperimentConfig c = input;
  c.model.vocabSize = 256;
  c.optim.gradAccum = 1;
  c.optim.warmupSteps = 0;
  c.optim.minLrRatio = 1.0;
  return c;
}

TrainBenchResult runTrainBench(const experiment::ExperimentConfig& input, const std::string& scheme,
                               int steps, int threads, bool fusedKernels, bool rowSplit) {
  TrainBenchResult r;
  r.fusedKernels = fusedKernels;
  r.rowSplit = rowSplit;
  // The switch is process-wide: set for the C++ timing, restored however this returns.
  struct FusedSwitch {
    bool was = kernels::fusedKernelsEnabled();
    explicit FusedSwitch(bool on) { kernels::setFusedKernelsEnabled(on); }
    ~FusedSwitch() { kernels::setFusedKernelsEnabled(was); }
  } fusedSwitch(fusedKernels);
  r.steps = steps;
  r.threads = threads;
  const experiment::ExperimentConfig c = trainBenchConfig(input);
  torch::set_num_threads(threads);
  train::Trainer t(experiment::trainerConfig(c), scheme, torch::kCPU);
  t.setRowSplit(rowSplit);
  const int B = c.optim.batchSize, T = c.model.seqLen;
  data::TokenBatch batch;
  batch.batch = B;
  batch.seqLen = T;
  torch::manual_seed(1);
  auto x = torch::randint(0, c.model.vocabSize, {B, T + 1}, torch::kInt64);
  for (int b = 0; b < B; ++b) {
    for (int i = 0; i < T; ++i) {
      batch.inputs.push_back(x[b][i].item<int64_t>());
      batch.targets.push_back(x[b][i + 1].item<int64_t>());
    }
  }
  for (int s = 0; s < 3; ++s) t.trainStepOn({batch}, s);
  const long faults0 = minorFaults();
  std::vector<double> each;  // every timed update's wall time
  double dt = 0;
  for (int s = 0; s < steps; ++s) {
    const auto s0 = std::chrono::steady_clock::now();
    t.trainStepOn({batch}, s);
    each.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count());
    dt += each.back();
  }
  for (double e : each) r.stepMs.push_back(1e3 * e);
  r.cppPageFaultsPerStep = static_cast<double>(minorFaults() - faults0) / steps;
  r.cppResidentMb = residentMb();
  r.cppTokensPerSecond = static_cast<double>(B) * T * steps / dt;

  return r;
}

}  // namespace depthlab::bench

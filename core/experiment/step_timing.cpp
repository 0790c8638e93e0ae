// See step_timing.h.
#include "experiment/step_timing.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <vector>

#include "train/trainer.h"

namespace depthlab::experiment {

MeasuredUpdate measureUpdate(const ExperimentConfig& c, const std::string& scheme, int maxRows) {
  ExperimentConfig one = c;
  const int rows = maxRows > 0 ? std::min(maxRows, c.optim.batchSize) : c.optim.batchSize;
  one.optim.batchSize = rows;
  one.optim.gradAccum = 1;
  const torch::Device device = train::resolveDevice(c.run.device);
  train::Trainer trainer(trainerConfig(one), scheme, device);
  data::TokenBatch batch;  // random tokens: the time of an update does not depend on them
  batch.batch = rows;
  batch.seqLen = c.model.seqLen;
  std::mt19937 rng(1);
  std::uniform_int_distribution<int64_t> id(0, c.model.vocabSize - 1);
  for (int i = 0; i < rows * c.model.seqLen; ++i) {
    batch.inputs.push_back(id(rng));
    batch.targets.push_back(id(rng));
  }
  std::vector<double> times;
  for (int i = 0; i < 3; ++i) {  // the first warms up (allocations, kernels, graphs)
    const auto t0 = std::chrono::steady_clock::now();
    trainer.trainStepOn({batch}, i);
    if (device.is_cuda()) torch::cuda::synchronize();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (i > 0) times.push_back(s);
  }
  std::sort(times.begin(), times.end());
  MeasuredUpdate m;
  m.rowsTimed = rows;
  m.timedSeconds = times[times.size() / 2];
  m.seconds = m.timedSeconds * (static_cast<double>(c.optim.batchSize) / rows) * c.optim.gradAccum;
  return m;
}

}  // namespace depthlab::experiment

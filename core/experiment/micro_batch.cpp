// See micro_batch.h.
#include "experiment/micro_batch.h"

#include <algorithm>
#include <stdexcept>

#include "train/devices.h"
#include "train/trainer.h"

#ifdef DEPTHLAB_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace depthlab::experiment {

int largestFittingMicroBatch(int globalBatch, int maxMicro, const std::function<bool(int)>& fits) {
  for (int b = std::min(globalBatch, maxMicro); b >= 1; --b) {
    if (globalBatch % b != 0) continue;
    if (fits(b)) return b;
  }
  throw std::runtime_error("not even a micro-batch of 1 sequence fits in the device's memory");
}

namespace {

// LibTorch's allocators say "out of memory" (CUDA and CPU alike).
bool mentionsOutOfMemory(const std::string& what) {
  return what.find("out of memory") != std::string::npos;
}

void releaseCachedMemory() {
#ifdef DEPTHLAB_WITH_CUDA
  c10::cuda::CUDACachingAllocator::emptyCache();
#endif
}

}  // namespace

bool updateFits(const ExperimentConfig& input, const std::vector<std::string>& schemes,
                torch::Device device, int micro, double headroom) {
  // At this micro-batch the update accumulates over more than one micro-batch when the global
  // batch is larger: the trial then runs two, so that CUDA graphs (on by default) capture both
  // of theirs (the first micro-batch's and the later ones', train/cuda_graph_step.h) as the
  // real update will.
  const int global = input.optim.batchSize * input.optim.gradAccum;
  const size_t microSteps = global > micro ? 2 : 1;
  ExperimentConfig c = input;
  c.optim.batchSize = micro;
  c.optim.gradAccum = 1;
  c.optim.warmupSteps = 0;
  bool fits = true;
  try {
    data::TokenBatch batch;
    batch.batch = micro;
    batch.seqLen = c.model.seqLen;
    batch.inputs.assign(static_cast<size_t>(micro) * c.model.seqLen, 1);
    batch.targets.assign(batch.inputs.size(), 2);
    std::vector<std::unique_ptr<train::Trainer>> trainers;
    for (const auto& s : schemes) {
      trainers.push_back(std::make_unique<train::Trainer>(trainerConfig(c), s, device));
    }
    const std::vector<data::TokenBatch> update(microSteps, batch);
    for (auto& t : trainers) {
      t->trainStepOn(update, 0);
      // A capture that ran out of memory turned the graphs off and the update went on eagerly:
      // it fitted only without them, so the micro-batch is too large for the default.
      if (mentionsOutOfMemory(t->cudaGraphsError())) fits = false;
    }
    if (device.is_cuda()) {
      torch::cuda::synchronize(device.index());
      const auto [freeBytes, totalBytes] = train::cudaMemory(device.index());
      if (totalBytes > 0 && static_cast<double>(freeBytes) < headroom * static_cast<double>(totalBytes)) {
        fits = false;
      }
    }
  } catch (const c10::Error& e) {
    if (!mentionsOutOfMemory(e.what_without_backtrace())) throw;
    fits = false;
  }
  releaseCachedMemory();
  return fits;
}

std::string chooseMicroBatch(ExperimentConfig& c, torch::Device device) {
  if (!c.optim.autoMicroBatch || !device.is_cuda()) return "";
  const int global = c.optim.batchSize * c.optim.gradAccum;
  const int micro = largestFittingMicroBatch(global, global, [&](int b) {
    return updateFits(c, c.schemes, device, b);
  });
  applyMicroBatch(c, micro);
  return "micro-batch " + std::to_string(micro) + " x " + std::to_string(global / micro) +
         " accumulation steps (chosen from free GPU memory for " +
         std::to_string(c.schemes.size()) + " model(s)); validation " +
         std::to_string(c.run.evalBatches) + " batches of " + std::to_string(micro);
}

}  // namespace depthlab::experiment

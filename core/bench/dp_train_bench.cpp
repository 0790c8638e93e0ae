// Data-parallel training benchmark; see dp_train_bench.h.
#include "bench/dp_train_bench.h"

#include <chrono>

#include "bench/train_bench.h"
#include "distributed/process_group.h"
#include "train/trainer.h"

namespace depthlab::bench {

DataParallelBenchResult runDataParallelBench(const experiment::ExperimentConfig& input,
                                             const std::string& scheme, int steps, int threads,
                                             const std::string& device,
                                             distributed::DistContext* dist, double bucketMB) {
  const auto c = trainBenchConfig(input);
  torch::set_num_threads(threads);
  const torch::Device dev = dist ? dist->device() : train::resolveDevice(device);
  train::Trainer t(experiment::trainerConfig(c), scheme, dev);
  if (dist) t.setDataParallel(dist, bucketMB);
  const int rank = dist ? dist->rank() : 0, world = dist ? dist->worldSize() : 1;
  const int B = c.optim.batchSize, T = c.model.seqLen;
  data::TokenBatch batch;
  batch.batch = B;
  batch.seqLen = T;
  torch::manual_seed(100 + rank);  // each rank its own tokens
  auto x = torch::randint(0, c.model.vocabSize, {B, T + 1}, torch::kInt64).contiguous();
  auto acc = x.accessor<int64_t, 2>();
  for (int b = 0; b < B; ++b) {
    for (int i = 0; i < T; ++i) {
      batch.inputs.push_back(acc[b][i]);
      batch.targets.push_back(acc[b][i + 1]);
    }
  }
  for (int s = 0; s < 3; ++s) t.trainStepOn({batch}, s);
  if (dist) dist->barrier();
  const auto t0 = std::chrono::steady_clock::now();
  for (int s = 0; s < steps; ++s) t.trainStepOn({batch}, s);
  if (dist) dist->barrier();
  const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  DataParallelBenchResult r;
  r.ranks = world;
  r.steps = steps;
  r.threads = threads;
  r.backend = dist ? dist->backend() : "";
  r.device = train::describeDevice(dev);
  r.tokensPerSecond = static_cast<double>(B) * T * steps * world / dt;
  return r;
}

}  // namespace depthlab::bench

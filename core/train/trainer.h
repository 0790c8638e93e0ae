// Trainer: one model, its optimizer and the training step. The step reads like a recipe:
// 1. batches, 2. forward, 3. backward (gradient accumulation), 4. clip + lr + step.
// Evaluation runs on fixed validation batches under NoGradGuard. The trainer knows nothing
// of the run store; the run loop (experiment/run_group) records what it returns.
// Legend: B micro-batch, T sequence length, V vocab.
#pragma once

#include <torch/torch.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "data/token_dataset.h"
#include "distributed/batch_shard.h"
#include "distributed/gradient_sync.h"
#include "model/decoder.h"
#include "train/cuda_graph_step.h"
#include "train/optim_config.h"
#include "train/worker_team.h"

namespace depthlab::train {

struct StepResult {
  double loss = 0;              // mean over the micro-batches of this update
  double gradNorm = 0;          // global L2 norm before clipping
  double lr = 0;                // peak-group learning rate used for this update
  bool finite = true;
  bool interrupted = false;     // the interrupt flag was set between micro-batches: no update
  std::vector<float> layerGradNorms;  // (L) L2 norm of each block's gradient
};

class Trainer {
 public:
  /// Builds the model with torch's RNG seeded by `seed`, so schemes that share parameters
  /// (pre_ln and lns) start from identical weights.
  Trainer(const TrainerConfig& config, const std::string& scheme,
          torch::Device device);

  /// One optimizer update at `step` (0-based) on the dataset's batches for (seed, step).
  StepResult trainStep(const data::TokenDataset& data, int64_t step);
  /// The same update on explicit micro-batches (their mean gradient); trainStep calls it.
  StepResult trainStepOn(const std::vector<data::TokenBatch>& micro, int64_t step);
  /// Checked between micro-batches: when set, the update in progress is abandoned (no optimizer
  /// step, gradients dropped) and trainStepOn returns with `interrupted`. nullptr: never.
  void setInterruptFlag(const std::atomic<bool>* flag) { m_interrupt = flag; }
  /// On the CPU with more than one intra-op thread, forward and backward run over the threads
  /// with one share of every micro-batch's rows each (train/row_split.h; the default) instead
  /// of splitting every op over them. Off: every op split over ATen's threads, as PyTorch does.
  void setRowSplit(bool on) { m_rowSplit = on; }
  /// Data-parallel training over `dist`'s ranks (nullptr: one process): trainStep takes this
  /// rank's share of every global batch (distributed/batch_shard), the gradients are averaged
  /// over the ranks in buckets of `bucketMB` while backward runs, and the loss reported is the
  /// global batch's. The interrupt flag is not honoured mid-update then (the ranks must agree;
  /// the run loop stops them together between updates).
  void setDataParallel(distributed::DistContext* dist, double bucketMB = 25);
  /// On a CUDA device: each micro-batch's forward and backward replayed from CUDA graphs
  /// (train/cuda_graph_step.h) when the update's micro-batches share one shape and training is
  /// not data-parallel; the same numbers as the eager step. Default: on
  /// (DEPTHLAB_CUDA_GRAPHS=0 in the environment: off). Ignored on the CPU. A capture or
  /// replay that fails turns them off for this trainer (cudaGraphsError() says why, and so does
  /// stderr) and the update runs eagerly from its start.
  void setCudaGraphs(bool on);
  bool cudaGraphs() const { return m_cudaGraphs; }
  int64_t cudaGraphReplays() const { return m_graphStep ? m_graphStep->replays() : 0; }
  int64_t cudaGraphCaptures() const { return m_graphStep ? m_graphStep->captures() : 0; }
  const std::string& cudaGraphsError() const { return m_cudaGraphsError; }
  distributed::DistContext* dataParallel() const { return m_dist; }
  /// Mean validation loss over the first `nBatches` fixed validation batches.
  double evaluate(const data::TokenDataset& data, int nBatches);

  model::Decoder& model() { return m_model; }
  torch::optim::Optimizer& optimizer() { return *m_optimizer; }
  const TrainerConfig& config() const { return m_config; }
  const std::string& scheme() const { return m_scheme; }
  torch::Device device() const { return m_device; }
  /// Tensors (B, T) for a TokenBatch on this trainer's device.
  std::pair<torch::Tensor, torch::Tensor> toTensors(const data::TokenBatch& b) const;

 private:
  /// Whether this update's forward and backward replay CUDA graphs.
  bool graphsApply(const std::vector<data::TokenBatch>& micro) const;
  /// Forward and backward of every micro-batch by replay; false (gradients dropped) when the
  /// graphs failed and were turned off.
  bool graphedMicroSteps(const std::vector<data::TokenBatch>& micro, bool autocast,
                         torch::Tensor& lossSum, bool& interrupted);
  /// Threads the row split uses for this update; 1: the per-op path.
  int rowSplitWorkers(const std::vector<data::TokenBatch>& micro) const;
  /// Sets every parameter's gradient to none.
  void dropGradients();
  /// 2.-3. forward and backward of every micro-batch by the path that applies; false: interrupted.
  bool forwardBackwardAll(const std::vector<data::TokenBatch>& micro, torch::Tensor& lossSum);
  /// Forward and backward over `workers` threads, each on a share of the rows; false: interrupted.
  bool rowSplitMicroSteps(const std::vector<data::TokenBatch>& micro, int workers,
                          torch::Tensor& lossSum);
  /// Forward and backward one micro-batch after another, ops over ATen threads; false: interrupted.
  bool eagerMicroSteps(const std::vector<data::TokenBatch>& micro, bool autocast,
                       torch::Tensor& lossSum);
  /// Data-parallel: finishes the gradient averaging and averages the loss sum over the ranks.
  void averageOverRanks(torch::Tensor& lossSum);
  /// Fills r's loss and gradient norms from one host copy; returns the defined gradients.
  std::vector<torch::Tensor> measureGradients(const torch::Tensor& lossSum, double nMicro,
                                              StepResult& r);
  /// Clips the gradients to the configured norm, sets the scheduled learning rates and steps.
  void clipAndStep(std::vector<torch::Tensor>& grads, int64_t step, StepResult& r);

  TrainerConfig m_config;
  std::string m_scheme;
  torch::Device m_device;
  model::Decoder m_model{nullptr};
  std::unique_ptr<torch::optim::Optimizer> m_optimizer;
  std::vector<double> m_groupPeakLr;
  std::vector<torch::Tensor> m_paramsInOrder;  // every parameter, grouped by block
  std::vector<int> m_paramOwner;               // block index of each, -1 outside the blocks
  double m_gradientBytes = 0;                  // all of their gradients (the row split's copies)
  const std::atomic<bool>* m_interrupt = nullptr;
  bool m_rowSplit = true;
  std::unique_ptr<WorkerTeam> m_team;  // the row split's threads, kept from update to update
  distributed::DistContext* m_dist = nullptr;
  std::unique_ptr<distributed::GradientSync> m_sync;
  std::vector<distributed::BatchShard> m_shards;  // this rank's share of every global batch
  bool m_cudaGraphs = false;
  std::unique_ptr<CudaGraphStep> m_graphStep;  // made at the first graphed update
  std::string m_cudaGraphsError;
};

/// Intra-op threads to use when the config says 0: every core. Measured on this 2-core machine
/// with `bench train` (C++ tokens/s, 1 vs 2 threads, row split): d=64 (cpu-demo, 24 layers)
/// ~5,500 vs ~9,500; d=256 (12 layers) 1,313 vs 2,480; a whole cpu-demo run 121 s vs 76 s.
/// (Before the row split, per-op threads made d=64 slower on 2 threads than on 1.)
int defaultThreads(const model::ModelConfig& model);
/// "cpu", or "cuda:N (name)"; throws std::runtime_error when CUDA was asked for but is absent.
torch::Device resolveDevice(const std::string& spec);
std::string describeDevice(torch::Device device);

}  // namespace depthlab::train

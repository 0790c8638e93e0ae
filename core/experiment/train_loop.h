// The training loop behind runGroup and resumeRun (experiment/run_group), internal to
// experiment/: the members of a group (a trainer and its run's bookkeeping each), one update per
// member per step and what is due after it (logged scalars, probes, evaluation, checkpoints,
// flushing, the stop decision, agreed between data-parallel ranks), the end of the runs, and a
// failed data-parallel group marked crashed. Also the set-up steps both entry points share.
// Does not create runs or choose checkpoints to resume from (run_group does). No Qt.
#pragma once

#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/token_dataset.h"
#include "experiment/run_group.h"
#include "train/trainer.h"

namespace depthlab::experiment {

using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Member {
  int64_t runId = 0;
  ExperimentConfig config;              // the run's whole config (the trainer holds its part)
  std::unique_ptr<train::Trainer> trainer;
  MemberProgress progress;
  store::WriteBatch pending;
  bool active = true;
  std::string checkpointDir;            // runCheckpointDir(...)
  std::string storeId;                  // the database's id, written into every checkpoint
  std::string setAsideNote;             // a new run's folder held older files, moved aside
  std::optional<double> bestVal;        // lowest validation loss so far
  std::optional<int64_t> bestStep;      // its step, when a checkpoint was written there
  std::optional<int64_t> lastCheckpoint;
  int failedCheckpoints = 0;            // writes that failed since the last one that worked
  std::optional<int64_t> firstFailedCheckpoint;  // the step of the first of them
  double tokensSeen = 0;                // training targets that counted so far (no pads)
  bool writer = true;                   // false on data-parallel ranks other than 0: they
                                        // only train (no checkpoints, probes, evaluations)
  size_t index = 0;                     // position in the group (set by trainLoop)
};

/// Trains every active member from `startStep` to the configured number of steps, writing to
/// `store` (rank 0's, or a scratch one); `afterFirstStep` runs once, after the first step.
void trainLoop(std::vector<Member>& members, const ExperimentConfig& config,
               const data::TokenDataset& data, store::RunStore& store,
               const RunGroupOptions& o, int64_t startStep, GroupResult& result,
               const std::function<void()>& afterFirstStep = {});

/// The corpus as a dataset; sets config.model.vocabSize. `beforeBatching` runs once the
/// vocabulary is known and before the batch size is used (the GPU micro-batch choice).
data::TokenDataset loadDataset(ExperimentConfig& config,
                               const std::function<void()>& beforeBatching = {},
                               const std::function<void(const std::string&)>& phase = {},
                               const std::atomic<bool>* stop = nullptr);
/// Intra-op threads: the config's, else the measured default.
void applyThreads(const ExperimentConfig& config);
/// RAM for the CPU; free memory of the GPU (checked again, for real, by the micro-batch choice).
void requireFitsDevice(const ExperimentConfig& c, torch::Device device);
/// The same before the corpus is read (nothing allocated, no tokenizer trained): the vocabulary
/// taken from the tokenizer's name where it says it (byte, spm:N), else the config's.
void requireFitsBeforeData(const ExperimentConfig& c, torch::Device device);
/// Data-parallel: every member starts from rank 0's weights and trains its share of each
/// global batch with averaged gradients. Nothing without o.dist.
void joinTrainers(std::vector<Member>& members, const RunGroupOptions& o);
/// The event line saying how the ranks split the global batch.
std::string dataParallelNote(const ExperimentConfig& c, const distributed::DistContext& d);

}  // namespace depthlab::experiment

// RunGroup: the run loop. Trains one or more schemes as a paired group (same seed, same
// batches, identical initial weights where parameters are shared), in lockstep, and writes
// everything to the run store as it happens: per-step train loss / lr / grad norm / tokens/s,
// per-layer gradient norms, evaluations, checkpoints, status. The one place that wires data,
// model, trainer and store together. No Qt, no printing: progress goes to a callback.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "experiment/experiment_config.h"
#include "store/run_store.h"

namespace depthlab::distributed {
class DistContext;
}

namespace depthlab::experiment {

struct MemberProgress {
  int64_t runId = 0;
  std::string scheme;
  store::RunStatus status = store::RunStatus::Running;  // running, finished, diverged, stopped
  int64_t step = 0;            // updates done
  double lossTrain = 0;        // the last update's (meaningless while step is 0: none yet)
  std::optional<double> lossVal;
  double tokensPerSecond = 0;
  std::optional<int64_t> divergedAt;
  /// Set when the run could not write its last checkpoint (a full disk): it is left stopped,
  /// not finished, and this says what is missing and where resume continues from.
  std::string unfinishedBecause;
};

struct GroupProgress {
  int64_t step = 0, totalSteps = 0;
  double elapsedSeconds = 0, etaSeconds = 0;
  std::vector<MemberProgress> members;
};

struct RunGroupOptions {
  std::string checkpointDir;                       // "" = dataDir()/checkpoints; each database
                                                   // gets its own folder under it
  std::function<void(const GroupProgress&)> onProgress;  // called about 4x a second
  const std::atomic<bool>* stopFlag = nullptr;     // e.g. set by SIGINT
  double flushSeconds = 0.25;                      // max delay before metrics hit the store
  double storeGiveUpSeconds = 600;                 // a store unwritable this long stops the
                                                   // group (checkpointed); shorter hiccups wait
  std::function<void(const std::string&)> onNotice;  // lines for the user (store trouble, resume)
  std::function<void(const std::vector<int64_t>&)> onRunsStarted;  // the run ids, once running
  /// Each phase of the start as it begins, with the seconds since runGroup was called:
  /// reading the corpus, the tokenizer, encoding, building the models, the first step.
  std::function<void(double seconds, const std::string& phase)> onPhase;
  /// What the group will cost here, before its first update (experiment/run_cost: tokens,
  /// passes over the corpus, time, checkpoint disk), then what the first update's time makes
  /// of it; `warning` marks a line to act on (a corpus read more than kCorpusPassesWarning
  /// times, a disk too small). The same lines become events of every run. Rank 0 only.
  std::function<void(const std::string& line, bool warning)> onCost;
  /// Data-parallel training (experiment/data_parallel; nullptr: one process). Every rank runs
  /// runGroup / resumeRun with the same arguments; rank 0 alone writes the store (one run per
  /// scheme), the checkpoints, the probes and the evaluations, and the other ranks ignore
  /// `store` (they keep a scratch one in memory). The ranks agree between updates on stopping;
  /// a rank that fails ends the others' collectives, and rank 0 marks the runs crashed.
  distributed::DistContext* dist = nullptr;
  double bucketMB = 25;                            // gradient all-reduce bucket size
  /// resumeRun: train to this step instead of the configured count (0: as configured), e.g.
  /// a finished run further. The learning-rate schedule keeps the length it was planned
  /// with (optim.scheduleSteps): past it the rate stays at its floor. Recorded in the run's
  /// config and events.
  int64_t resumeToStep = 0;
};

struct GroupResult {
  std::string groupName;
  std::vector<MemberProgress> members;
  double seconds = 0;
  double probeSeconds = 0;        // part of `seconds` the training thread spent on depth probes
  double probeBesideSeconds = 0;  // depth probes run on a spare core beside training (not in
                                  // `seconds`' critical path)
};

/// Loads the data, creates one run per scheme in `store`, trains them. Bad config or data, or a
/// checkpoint folder that cannot be written, throws before any run is created (a copied database
/// first takes its own id: experiment/checkpoint_folder). The group's name is made unique in the store (a name in
/// use gets the next free " N" suffix): every launch is its own group.
GroupResult runGroup(const ExperimentConfig& config, store::RunStore& store,
                     const RunGroupOptions& options);
/// Continues a stored run from its newest checkpoint that verifies (newer broken ones are
/// skipped, saying why) to its configured step count, or to options.resumeToStep. Checkpoint
/// files in the run's folder that the store never recorded (written while it was unwritable)
/// count too, and are recorded. A run with no checkpoint file at all (killed before its first)
/// restarts from step 0, saying so: its weights there are a function of its seed. Refuses a
/// run whose process is alive, and a resumeToStep not past the checkpoint.
GroupResult resumeRun(int64_t runId, store::RunStore& store, const RunGroupOptions& options);
/// Resumes several runs in this process: side by side in lockstep (one data pass, as runGroup
/// trained them) when they share their config but the scheme — the runs of a paired group (one
/// stopped a step ahead skips the steps it has done); otherwise one after the other, saying why
/// to options.onNotice. One id is resumeRun; data-parallel resumes take one run.
GroupResult resumeRuns(const std::vector<int64_t>& runIds, store::RunStore& store,
                       const RunGroupOptions& options);

}  // namespace depthlab::experiment

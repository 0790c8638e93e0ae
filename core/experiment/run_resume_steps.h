// The steps resumeRun (run_resume.cpp) and resumeRuns (run_resume_many.cpp) share: claiming a
// stored run and choosing its checkpoint, telling a finished run, and loading runs as members
// of the training loop. Internal to experiment/; the public entry points are in run_group.h.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "experiment/run_checkpoints.h"
#include "experiment/run_group.h"
#include "experiment/train_loop.h"

namespace depthlab::experiment {

/// A run about to resume: its stored row, its config (retargeted to options.resumeToStep),
/// the checkpoint chosen by header (nullopt: it wrote none, step 0) and that step.
struct PreparedResume {
  store::RunInfo run;
  ExperimentConfig config;
  std::optional<VerifiedCheckpoint> chosen;
  int64_t from = 0;
};

/// The run, refused (throws why) when there is none or its training process lives.
store::RunInfo requireResumable(store::RunStore& store, int64_t runId);
/// `given` with checkpointDir the absolute base run `runId` writes under (resumeCheckpointBase:
/// --checkpoint-dir, else the run's own folder), recorded in the run; a move is said to onNotice.
RunGroupOptions withRunsCheckpointBase(store::RunStore& store, int64_t runId,
                                       const RunGroupOptions& given);
/// Claims run `runId` (refused while its process lives) and chooses its checkpoint; throws why
/// it cannot resume.
PreparedResume prepareResume(int64_t runId, store::RunStore& store, const RunGroupOptions& options);
/// The result of a finished run with nothing to train (said to options.onNotice), else nullopt.
std::optional<GroupResult> finishedAlready(store::RunStore& store, const PreparedResume& p,
                                           const RunGroupOptions& options);
/// Each run's trainer at its checkpoint (`beforeRunning` sees each member once it is loaded),
/// then every run marked running and its resume recorded; members in the order of `runs`.
std::vector<Member> loadResumedMembers(store::RunStore& store,
                                       const std::vector<PreparedResume>& runs,
                                       const std::string& copyNote,
                                       const RunGroupOptions& options, torch::Device device,
                                       const std::function<void(const Member&)>& beforeRunning);

}  // namespace depthlab::experiment

// resumeRuns: several stopped runs resumed in one process. Runs that share their data and
// config (the runs of one paired group) train side by side in lockstep, as runGroup trained
// them, a run that stopped a step ahead waiting for the others; otherwise each resumes in
// turn, saying why. See run_group.h; the one-run resume is in run_resume.cpp.
#include <algorithm>
#include <set>
#include <sstream>

#include "experiment/checkpoint_folder.h"
#include "experiment/run_config.h"
#include "experiment/run_resume_steps.h"
#include "train/devices.h"

namespace depthlab::experiment {

namespace {

std::string idList(const std::vector<int64_t>& ids) {
  std::ostringstream s;
  for (size_t i = 0; i < ids.size(); ++i) s << (i ? ", " : "") << ids[i];
  return s.str();
}

/// The config a run trains with, its scheme list left out (the runs of one group share it).
std::string sharedConfig(const PreparedResume& p) {
  auto j = toJson(p.config);
  j.erase("schemes");
  return j.dump();
}

/// Why runs at these steps cannot train side by side ("" when they can): one step apart at
/// most (a stop often lands between two members' updates: the run ahead waits one step, and its
/// checkpoints keep their true step), and none waiting at step 0 (the initial probes).
std::string stepObstacle(const std::vector<int64_t>& steps) {
  const auto [lo, hi] = std::minmax_element(steps.begin(), steps.end());
  if (*hi - *lo > 1 || (*hi != *lo && *lo == 0)) {
    return "their checkpoints are of steps " + std::to_string(*lo) + " and " + std::to_string(*hi);
  }
  return "";
}

/// Why `runs` cannot train side by side ("" when they can).
std::string sideBySideObstacle(const std::vector<PreparedResume>& runs) {
  const auto& first = runs.front();
  std::vector<int64_t> steps;
  for (const auto& p : runs) steps.push_back(p.from);
  if (auto why = stepObstacle(steps); !why.empty()) return why;
  for (const auto& p : runs) {
    if (sharedConfig(p) != sharedConfig(first)) {
      return "runs " + std::to_string(first.run.id) + " and " + std::to_string(p.run.id) +
             " differ in their config (data, shape or schedule)";
    }
  }
  return "";
}

/// Each of `runs` resumed alone, one after the other, saying `why` (of `runIds`) first.
GroupResult resumeInTurn(const std::vector<PreparedResume>& runs, const std::string& why,
                         const std::vector<int64_t>& runIds, store::RunStore& store,
                         const RunGroupOptions& options) {
  if (options.onNotice) {
    options.onNotice("resuming runs " + idList(runIds) + " one after the other: " + why);
  }
  GroupResult all;
  for (const auto& p : runs) {
    if (options.stopFlag && options.stopFlag->load()) break;
    auto one = resumeRun(p.run.id, store, options);
    all.groupName = one.groupName;
    all.seconds += one.seconds;
    all.probeSeconds += one.probeSeconds;
    all.probeBesideSeconds += one.probeBesideSeconds;
    all.members.insert(all.members.end(), one.members.begin(), one.members.end());
  }
  return all;
}

/// `runs` (one config, steps at most one apart) trained side by side from the earliest step.
GroupResult resumeSideBySide(const std::vector<PreparedResume>& runs,
                             const std::vector<int64_t>& runIds, store::RunStore& store,
                             const RunGroupOptions& options) {
  const std::string copyNote = claimCheckpointFolder(store, options.checkpointDir);
  if (!copyNote.empty() && options.onNotice) options.onNotice(copyNote);
  ExperimentConfig config = runs.front().config;
  const torch::Device device = train::resolveDevice(config.run.device);
  const auto started = Clock::now();
  auto phase = [&](const std::string& what) {
    if (options.onPhase) options.onPhase(since(started), what);
  };
  data::TokenDataset dataset = loadDataset(config, {}, phase, options.stopFlag);
  phase("loading step " + std::to_string(runs.front().from) + " of runs " + idList(runIds));
  applyThreads(config);
  config.schemes.clear();
  for (const auto& p : runs) config.schemes.push_back(p.run.scheme);
  requireFitsDevice(config, device);
  GroupResult result;
  result.groupName = runs.front().run.groupName;
  auto members = loadResumedMembers(store, runs, copyNote, options, device, {});
  // The loop starts at the earliest; a member a step ahead skips the step it has done. An
  // older file that loaded instead of a corrupt newest one may leave them further apart.
  std::vector<int64_t> steps;
  for (const auto& m : members) steps.push_back(m.progress.step);
  if (const std::string why = stepObstacle(steps); !why.empty()) {
    for (const auto& p : runs) store.setStatus(p.run.id, store::RunStatus::Stopped);
    return resumeInTurn(runs, why, runIds, store, options);
  }
  const int64_t from = *std::min_element(steps.begin(), steps.end());
  joinTrainers(members, options);
  trainLoop(members, config, dataset, store, options, from, result);
  return result;
}

}  // namespace

GroupResult resumeRuns(const std::vector<int64_t>& givenIds, store::RunStore& store,
                       const RunGroupOptions& given) {
  std::vector<int64_t> runIds;  // each once, in the order given
  for (int64_t id : givenIds) {
    if (std::find(runIds.begin(), runIds.end(), id) == runIds.end()) runIds.push_back(id);
  }
  if (runIds.empty()) throw std::runtime_error("resume: no run ids");
  if (runIds.size() == 1) return resumeRun(runIds.front(), store, given);
  if (given.dist) {
    throw std::runtime_error("resume: data-parallel ranks resume one run at a time (runs " +
                             idList(runIds) + " were given)");
  }
  // Each run writes under its own folder (or --checkpoint-dir): side by side only in one.
  RunGroupOptions options = given;
  std::set<std::string> bases;
  std::vector<PreparedResume> runs;
  GroupResult done;  // finished runs with nothing to train, as resumeRun reports them
  for (int64_t id : runIds) {
    const RunGroupOptions own = withRunsCheckpointBase(store, id, given);  // the run's folder
    bases.insert(own.checkpointDir);
    auto p = prepareResume(id, store, own);
    if (auto finished = finishedAlready(store, p, own)) {
      done.groupName = finished->groupName;
      done.members.insert(done.members.end(), finished->members.begin(), finished->members.end());
    } else {
      runs.push_back(std::move(p));
    }
  }
  if (runs.empty()) return done;
  if (bases.size() == 1) options.checkpointDir = *bases.begin();
  const std::string why = bases.size() > 1 ? "their checkpoints live under different folders"
                                            : sideBySideObstacle(runs);
  auto result = why.empty() ? resumeSideBySide(runs, runIds, store, options)
                            : resumeInTurn(runs, why, runIds, store, options);
  result.members.insert(result.members.end(), done.members.begin(), done.members.end());
  return result;
}

}  // namespace depthlab::experiment

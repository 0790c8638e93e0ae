// resumeRun: continues a stored run from its newest loadable checkpoint (or step 0), also on a
// data-parallel group (rank 0 loads and sends the state; the others follow), or finishes a run
// that has nothing left to train. See run_group.h; runGroup, which starts groups, is in
// run_group.cpp, and both train through train_loop.
#include "experiment/run_group.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <unistd.h>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>

#include "distributed/process_group.h"
#include "experiment/checkpoint_folder.h"
#include "experiment/group_names.h"
#include "experiment/micro_batch.h"
#include "experiment/run_checkpoints.h"
#include "experiment/run_config.h"
#include "experiment/run_resume_steps.h"
#include "experiment/train_loop.h"
#include "store/metric_catalogue.h"
#include "train/checkpoint.h"
#include "train/checkpoint_tensors.h"
#include "train/devices.h"

namespace depthlab::experiment {

namespace {

// A data-parallel rank other than 0 keeps its runs in a scratch store in memory.
store::RunStore scratchStore() { return store::RunStore::open(":memory:"); }

// A data-parallel resume: rank 0 loads the checkpoint, then sends the optimizer's options and
// step counters through the rendezvous store and its state tensors through the group, in place
// (joinTrainers sends the weights). No rank reads or copies the file but rank 0.
void sendResumedState(distributed::DistContext& dist, train::Trainer& t, int64_t step) {
  train::OptimizerSnapshot snap = train::optimizerSnapshot(t.optimizer());
  dist.setValue("depthlab/resume-state",
                nlohmann::json{{"step", step}, {"optimizer", snap.json}}.dump());
  std::vector<torch::Tensor> tensors;
  for (const auto& nt : snap.tensors) tensors.push_back(nt.tensor.detach());
  dist.broadcast(tensors, 0);
}

/// The training tokens a resumed run had read after `step` updates: from its tokens_seen series
/// (runs from before it: every slot of every update).
double tokensSeenAt(store::RunStore& store, int64_t runId, int64_t step,
                    const ExperimentConfig& c) {
  const double slots = static_cast<double>(c.optim.batchSize) * c.optim.gradAccum * c.model.seqLen;
  const auto s = store.scalarSeries(runId, metrics::kTokensSeen, INT64_MIN, step - 1);
  if (s.empty()) return static_cast<double>(step) * slots;
  const auto& last = s.back();  // logged at last.step: after last.step + 1 updates
  const double perStep = last.value / static_cast<double>(last.step + 1);
  return last.value + static_cast<double>(step - (last.step + 1)) * perStep;
}

/// The follower's side of sendResumedState; returns the step rank 0 loaded.
int64_t receiveResumedState(distributed::DistContext& dist, train::Trainer& t) {
  const auto j = nlohmann::json::parse(
      dist.waitValue("depthlab/resume-state", "rank 0 to load the checkpoint"));
  std::vector<torch::Tensor> tensors;
  for (const auto& nt : train::prepareOptimizerState(t.optimizer(), j.at("optimizer"))) {
    tensors.push_back(nt.tensor.detach());
  }
  dist.broadcast(tensors, 0);
  return j.at("step").get<int64_t>();
}

}  // namespace

namespace {

// resumeRun on a data-parallel rank other than 0: rank 0 names the run's config and
// checkpoint step, then sends the loaded state through the group (no shared folder needed).
GroupResult resumeFollower(const RunGroupOptions& options) {
  distributed::DistContext& dist = *options.dist;
  const auto started = Clock::now();
  auto phase = [&](const std::string& what) {
    if (options.onPhase) options.onPhase(since(started), what);
  };
  phase("waiting for rank 0 to read the corpus and choose the checkpoint");
  const auto j = nlohmann::json::parse(
      dist.waitValue("depthlab/resume", "rank 0 to read the corpus and choose the checkpoint"));
  ExperimentConfig config = configFromJson(j.at("config"));
  const std::string scheme = j.at("scheme").get<std::string>();
  GroupResult result;
  result.groupName = j.at("group").get<std::string>();
  // Only a finished run has nothing to train: one that crashed after its last checkpoint still
  // evaluates, probes and records its end, and rank 0 may fall back to an earlier checkpoint than
  // it named when that one cannot be read. Both need this rank in the group.
  if (j.value("finished", false)) return result;
  const torch::Device device = dist.device();
  data::TokenDataset dataset = loadDataset(config, {}, phase, options.stopFlag);
  applyThreads(config);
  store::RunStore scratch = scratchStore();
  Member m;
  m.writer = false;
  m.config = config;
  m.trainer = std::make_unique<train::Trainer>(trainerConfig(config), scheme, device);
  const int64_t loadedStep = receiveResumedState(dist, *m.trainer);
  store::NewRun nr;
  nr.scheme = scheme;
  nr.name = scheme;
  nr.configJson = toJson(config).dump();
  m.runId = scratch
                .createGroup(
                    {nr}, [](const std::set<std::string>&) { return std::string("scratch"); },
                    [](const std::string&, store::NewRun&) {})
                .second.front();
  m.progress = {m.runId, scheme,      store::RunStatus::Running, loadedStep, 0, std::nullopt,
                0,       std::nullopt};
  std::vector<Member> members;
  members.push_back(std::move(m));
  joinTrainers(members, options);
  trainLoop(members, config, dataset, scratch, options, loadedStep, result);
  return result;
}

}  // namespace

namespace {

// A resumed run trained to options.resumeToStep: its config and an event say so, the schedule
// keeps its planned length. Throws when that step is not past the checkpoint's.
void retarget(store::RunStore& store, const store::RunInfo& run, ExperimentConfig& config,
              int64_t checkpointStep, const RunGroupOptions& options) {
  const int64_t to = options.resumeToStep;
  if (to <= checkpointStep) {
    throw std::runtime_error("run " + std::to_string(run.id) + " has trained " +
                             std::to_string(checkpointStep) + " steps (its newest checkpoint); " +
                             "--steps must be more than that");
  }
  if (to > std::numeric_limits<int>::max()) throw std::runtime_error("--steps is too large");
  const int64_t planned = config.optim.steps;
  if (config.optim.scheduleSteps <= 0) config.optim.scheduleSteps = config.optim.steps;
  config.optim.steps = static_cast<int>(to);
  if (auto problems = validate(config, ConfigScope::Run); !problems.empty()) {
    throw std::runtime_error("cannot train run " + std::to_string(run.id) + " to step " +
                             std::to_string(to) + ": " + problems.front().message);
  }
  std::ostringstream why;
  why << "trained to " << to << " steps instead of " << planned
      << "; the learning-rate schedule keeps its " << config.optim.scheduleSteps << " steps";
  if (to > config.optim.scheduleSteps) {
    why << " (from step " << config.optim.scheduleSteps << " on the rate stays at its floor, "
        << config.optim.lr * config.optim.minLrRatio << ")";
  }
  store.setRunConfig(run.id, toJson(config).dump());
  store::WriteBatch b;
  b.event(checkpointStep, store::EventLevel::Info, why.str());
  store.write(run.id, b);
  if (options.onNotice) options.onNotice("run " + std::to_string(run.id) + ": " + why.str());
}

}  // namespace

namespace {

// A run whose recorded checkpoint files are all gone is never restarted silently from step 0.
std::runtime_error missingCheckpoints(const store::RunInfo& run,
                                      const std::vector<store::CheckpointInfo>& rows) {
  std::string steps, files;
  bool relative = false;
  for (const auto& r : rows) {
    steps += (steps.empty() ? "" : ", ") + std::to_string(r.step);
    files += "\n  missing " + r.path;
    relative = relative || std::filesystem::path(r.path).is_relative();
  }
  return std::runtime_error(
      "run " + std::to_string(run.id) + " recorded checkpoints at step(s) " + steps +
      ", but none of their files is there; it is not restarted from step 0. Put the files back" +
      (relative ? " (relative paths, recorded by an older version: resume from the directory "
                  "the run was started in)"
                : "") +
      ", or train a new group with its config" + files);
}

// The checkpoint resume starts from (by header), or nullopt when the run has no checkpoint file
// at all, rows or its folder (killed before its first): it restarts from step 0. A finished run,
// or one whose files are all refused, throws why.
std::optional<VerifiedCheckpoint> checkpointToResume(store::RunStore& store,
                                                     const store::RunInfo& run,
                                                     const std::string& base) {
  try {
    return newestVerifiedCheckpoint(store, run, std::nullopt, nullptr, base);
  } catch (const std::runtime_error&) {
    if (run.status == store::RunStatus::Finished || anyCheckpointFile(store, run, base)) throw;
    if (auto rows = store.checkpoints(run.id); !rows.empty()) throw missingCheckpoints(run, rows);
    return std::nullopt;
  }
}

// "; the metrics of steps A-B were never recorded" when the train-loss rows stop well before
// `step` (a checkpoint written while the store refused its writes); "" otherwise.
std::string metricsGap(store::RunStore& store, const store::RunInfo& run, int64_t step) {
  const auto rows = store.scalarSeries(run.id, metrics::kLossTrain, INT64_MIN, step - 1);
  const int64_t next = rows.empty() ? 0 : rows.back().step + 1;
  if (step - next <= std::max(1, configOf(run).run.logEvery)) return "";
  return "; the metrics of steps " + std::to_string(next) + "-" + std::to_string(step - 1) +
         " were never recorded (the store refused them)";
}

struct ResumePoint {
  train::CheckpointMeta meta;        // step 0 and no fields when restarted
  std::vector<std::string> skipped;  // newer checkpoints refused, and why
  std::string origin;                // the file, or why there is none
};

// Loads `chosen` (or the newest older one that loads: a corrupt file is skipped and the next
// older one replaces whatever it had half loaded) into m's trainer; records a file no row named.
// Without `chosen`, m's fresh trainer is the run's state at step 0.
ResumePoint loadResumePoint(store::RunStore& store, const store::RunInfo& run,
                            const std::optional<VerifiedCheckpoint>& chosen,
                            const std::string& base, Member& m, torch::Device device) {
  ResumePoint p;
  if (!chosen) {
    p.origin =
        "it wrote no checkpoint: restarted from step 0, whose weights are a function of its seed";
    return p;
  }
  const auto loaded = newestVerifiedCheckpoint(
      store, run, chosen->info.step,
      [&](const std::string& path) {
        return train::loadCheckpoint(path, m.trainer->model(), &m.trainer->optimizer(), device);
      },
      base);
  p.meta = loaded.meta;
  p.skipped = chosen->skipped;  // newer files refused by their headers
  p.skipped.insert(p.skipped.end(), loaded.skipped.begin(), loaded.skipped.end());
  p.origin = loaded.info.path;
  if (!loaded.recorded) {  // written while the store was unwritable: the store learns of it now
    store.addCheckpoint(run.id, loaded.info);
    p.origin += ", a file the database had not recorded";
    p.origin += metricsGap(store, run, p.meta.step);
  }
  m.lastCheckpoint = p.meta.step;
  return p;
}

// A finished run resumed with nothing to train: its own last numbers (not a fresh trainer's
// zeros), said before any data or weights are loaded.
GroupResult nothingToResume(store::RunStore& store, const store::RunInfo& run,
                            const ExperimentConfig& config, int64_t from,
                            const RunGroupOptions& options) {
  const int64_t runId = run.id;
  GroupResult done;
  done.groupName = run.groupName;
  MemberProgress p;
  p.runId = runId;
  p.scheme = run.scheme;
  p.status = run.status;
  p.step = from;
  const auto latest = store.latestScalars(runId);
  if (auto it = latest.find(metrics::kLossTrain); it != latest.end())
    p.lossTrain = it->second.value;
  if (auto it = latest.find(metrics::kLossVal); it != latest.end()) p.lossVal = it->second.value;
  done.members.push_back(p);
  if (options.onNotice) {
    options.onNotice("run " + std::to_string(runId) + " has trained all its " +
                     std::to_string(config.optim.steps) + " steps (its newest checkpoint is step " +
                     std::to_string(from) + "); nothing to resume (--steps N trains it further)");
  }
  return done;
}

// The resumed run as a member of the training loop: its trainer at the chosen checkpoint (or
// step 0), its best validation so far, the tokens it had read.
Member resumedMember(store::RunStore& store, const store::RunInfo& run,
                     const ExperimentConfig& config,
                     const std::optional<VerifiedCheckpoint>& chosen,
                     const RunGroupOptions& options, torch::Device device, ResumePoint& point) {
  const int64_t runId = run.id;
  Member m;
  m.runId = runId;
  m.checkpointDir = runCheckpointDir(store, runId, options.checkpointDir);
  m.storeId = store.storeId();
  m.config = config;
  m.trainer = std::make_unique<train::Trainer>(trainerConfig(config), run.scheme, device);
  point = loadResumePoint(store, run, chosen, options.checkpointDir, m, device);
  const auto& meta = point.meta;
  // The best validation so far, so pruning keeps its checkpoint when there is one.
  for (const auto& v : store.scalarSeries(runId, metrics::kLossVal, INT64_MIN, meta.step)) {
    if (!m.bestVal || v.value < *m.bestVal) m.bestVal = v.value, m.bestStep = v.step;
  }
  m.tokensSeen = tokensSeenAt(store, runId, meta.step, config);
  m.progress = {runId, run.scheme,  store::RunStatus::Running, meta.step, 0, std::nullopt,
                0,     std::nullopt};
  return m;
}

// The resume's events in the run (skipped files, a copied database, where it resumed from)
// and its notices on the console.
void recordResume(store::RunStore& store, int64_t runId, const ResumePoint& point,
                  const std::string& copyNote, const ExperimentConfig& config,
                  const RunGroupOptions& options) {
  const auto& meta = point.meta;
  const auto& skipped = point.skipped;
  store::WriteBatch b;
  for (const auto& why : skipped) {
    b.event(meta.step, store::EventLevel::Warning, "resume skipped the checkpoint at " + why);
  }
  if (!copyNote.empty()) b.event(meta.step, store::EventLevel::Warning, copyNote);
  b.event(meta.step, store::EventLevel::Info,
          "resumed from step " + std::to_string(meta.step) + " (" + point.origin + ")");
  if (options.dist)
    b.event(meta.step, store::EventLevel::Info, dataParallelNote(config, *options.dist));
  store.write(runId, b);
  if (options.onNotice) {
    for (const auto& why : skipped) options.onNotice("skipped the checkpoint at " + why);
    options.onNotice("resuming run " + std::to_string(runId) + " from step " +
                     std::to_string(meta.step) + " (" + point.origin + ")");
  }
}

}  // namespace

store::RunInfo requireResumable(store::RunStore& store, int64_t runId) {
  if (!store.run(runId)) throw std::runtime_error("no run with id " + std::to_string(runId));
  if (auto why = notTrainableReason(*store.run(runId)); !why.empty()) {
    throw std::runtime_error(why);
  }
  // A run has one owner: a live process keeps it; a dead one's run is taken over.
  store.reapCrashedRuns();
  if (auto who = store.liveOwner(runId)) {
    throw std::runtime_error(
        "run " + std::to_string(runId) + " is being trained by " + *who +
        "; resume takes over only a run whose process is gone (stop it first)");
  }
  return *store.run(runId);
}

RunGroupOptions withRunsCheckpointBase(store::RunStore& store, int64_t runId,
                                       const RunGroupOptions& given) {
  const auto run = requireResumable(store, runId);
  RunGroupOptions o = given;
  std::string note;
  o.checkpointDir = resumeCheckpointBase(store, run, given.checkpointDir, note);
  if (!note.empty() && o.onNotice) o.onNotice(note);
  return o;
}

PreparedResume prepareResume(int64_t runId, store::RunStore& store,
                             const RunGroupOptions& options) {
  requireResumable(store, runId);
  PreparedResume p;
  p.run = *store.run(runId);
  p.config = configOf(p.run);
  // Throws, listing why, when no checkpoint is usable; none at all (a run killed before its
  // first): step 0.
  p.chosen = checkpointToResume(store, p.run, options.checkpointDir);
  p.from = p.chosen ? p.chosen->info.step : 0;
  if (options.resumeToStep > 0 && options.resumeToStep != p.config.optim.steps) {
    retarget(store, p.run, p.config, p.from, options);
  }
  return p;
}

std::optional<GroupResult> finishedAlready(store::RunStore& store, const PreparedResume& p,
                                           const RunGroupOptions& options) {
  // A finished run has nothing to train. One killed after its last checkpoint but before it was
  // marked finished (crashed, or stopped at its last step) goes on with no step to train: its
  // final evaluation, probes and status are written then.
  if (p.from >= p.config.optim.steps && p.run.status == store::RunStatus::Finished) {
    return nothingToResume(store, p.run, p.config, p.from, options);
  }
  return std::nullopt;
}

std::vector<Member> loadResumedMembers(store::RunStore& store,
                                       const std::vector<PreparedResume>& runs,
                                       const std::string& copyNote, const RunGroupOptions& options,
                                       torch::Device device,
                                       const std::function<void(const Member&)>& beforeRunning) {
  std::vector<Member> members;
  std::vector<ResumePoint> points(runs.size());
  std::vector<int64_t> ids;
  for (size_t i = 0; i < runs.size(); ++i) {
    members.push_back(resumedMember(store, runs[i].run, runs[i].config, runs[i].chosen, options,
                                    device, points[i]));
    if (beforeRunning) beforeRunning(members.back());
    ids.push_back(runs[i].run.id);
  }
  for (int64_t id : ids) store.markRunning(id);
  if (options.onRunsStarted) options.onRunsStarted(ids);
  for (size_t i = 0; i < runs.size(); ++i) {
    recordResume(store, ids[i], points[i], copyNote, runs[i].config, options);
  }
  return members;
}

namespace {

// Data-parallel: names the run's config and checkpoint step to the other ranks, which wait for
// it also when there is nothing to train (`finished`: they return at once).
void announceResume(const RunGroupOptions& options, const PreparedResume& p, bool finished) {
  if (!options.dist) return;
  nlohmann::json j;
  j["finished"] = finished;
  j["config"] = toJson(p.config);
  j["scheme"] = p.run.scheme;
  j["group"] = p.run.groupName;
  options.dist->setValue("depthlab/resume", j.dump());
}

}  // namespace

GroupResult resumeRun(int64_t runId, store::RunStore& store, const RunGroupOptions& given) {
  if (given.dist && given.dist->rank() != 0) return resumeFollower(given);
  // The run goes on writing under its own folder wherever resume is started (or --checkpoint-dir).
  const RunGroupOptions options = withRunsCheckpointBase(store, runId, given);
  const std::string copyNote = claimCheckpointFolder(store, options.checkpointDir);
  if (!copyNote.empty() && options.onNotice) options.onNotice(copyNote);
  PreparedResume p = prepareResume(runId, store, options);
  if (auto done = finishedAlready(store, p, options)) {
    announceResume(options, p, true);
    return *done;
  }
  const torch::Device device =
      options.dist ? options.dist->device() : train::resolveDevice(p.config.run.device);
  const auto started = Clock::now();
  auto phase = [&](const std::string& what) {
    if (options.onPhase) options.onPhase(since(started), what);
  };
  // Rank 0 reads (and if need be prepares again) the corpus before the others map it: ranks that
  // prepared one store at once would write each other's shards.
  ExperimentConfig one = p.config;
  one.schemes = {p.run.scheme};
  requireFitsDevice(one, device);  // before the corpus is read (the vocabulary is recorded)
  data::TokenDataset dataset = loadDataset(p.config, {}, phase, options.stopFlag);
  announceResume(options, p, false);
  phase(
      (p.chosen ? "loading checkpoint step " + std::to_string(p.from) : std::string("restarting")) +
      " of run " + std::to_string(runId));
  applyThreads(p.config);
  GroupResult result;
  result.groupName = p.run.groupName;
  auto members = loadResumedMembers(store, {p}, copyNote, options, device, [&](const Member& m) {
    if (options.dist) sendResumedState(*options.dist, *m.trainer, m.progress.step);
  });
  const int64_t from = members.front().progress.step;  // the checkpoint that loaded
  joinTrainers(members, options);
  trainLoop(members, p.config, dataset, store, options, from, result);
  return result;
}

}  // namespace depthlab::experiment

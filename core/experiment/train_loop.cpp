// The training loop; see train_loop.h.
#include "experiment/train_loop.h"

#include <cmath>
#include <filesystem>
#include <set>
#include <thread>

#include "data/corpus.h"
#include "distributed/batch_shard.h"
#include "distributed/process_group.h"
#include "experiment/background_probes.h"
#include "experiment/probe_schedule.h"
#include "experiment/resource_estimate.h"
#include "experiment/run_checkpoints.h"
#include "experiment/run_cost.h"
#include "experiment/store_link.h"
#include "store/metric_catalogue.h"
#include "train/checkpoint.h"
#include "train/devices.h"
#include "train/thread_share.h"

namespace depthlab::experiment {

namespace {

// What a failed checkpoint write leaves: "the checkpoint at step S" and the newest one kept.
std::string keptCheckpointText(const Member& m) {
  return m.lastCheckpoint ? "the newest checkpoint kept is step " + std::to_string(*m.lastCheckpoint)
                          : std::string("no checkpoint of this run has been written yet");
}

// A failed write (a full disk, a vanished folder): training goes on. The first failure of a
// series is said; the next ones are counted and said once a write works again (a full folder
// had logged one identical line per checkpoint per run).
void noteFailedCheckpoint(Member& m, StoreLink& link, int64_t step, const std::string& why) {
  if (m.failedCheckpoints++ > 0) return;
  m.firstFailedCheckpoint = step;
  const std::string msg = "could not write the checkpoint at step " + std::to_string(step) + " (" +
                          why + "); " + keptCheckpointText(m) +
                          " (further failures are counted, not repeated)";
  store::WriteBatch b;
  b.event(step, store::EventLevel::Warning, msg);
  link.write(m.runId, std::move(b));
  if (link.onNotice) link.onNotice("run " + std::to_string(m.runId) + ": " + msg);
}

// Writes a checkpoint of `m` after `step` updates and prunes the older ones: the last
// checkpointKeep, the best and (at the end) the final one stay. Returns false when the file
// could not be written (said through noteFailedCheckpoint).
bool checkpoint(Member& m, StoreLink& link, int64_t step, bool final) {
  if (!m.writer || m.lastCheckpoint == step) return true;
  const auto& c = m.config;
  train::CheckpointMeta meta;
  meta.step = step;
  meta.scheme = m.progress.scheme;
  meta.runId = m.runId;
  meta.config = toJson(c);
  meta.storeId = m.storeId;
  const std::string path =
      (std::filesystem::path(m.checkpointDir) / ("step-" + std::to_string(step) + ".ckpt")).string();
  std::string sum;
  try {
    sum = train::saveCheckpoint(path, m.trainer->model(), &m.trainer->optimizer(), meta);
  } catch (const std::exception& e) {
    std::error_code ec;
    std::filesystem::remove(path + ".tmp", ec);
    noteFailedCheckpoint(m, link, step, e.what());
    return false;
  }
  auto now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch());
  link.addCheckpoint(m.runId, {step, path, sum, now.count()});
  if (m.failedCheckpoints > 0) {
    store::WriteBatch b;
    b.event(step, store::EventLevel::Info,
            "checkpoints can be written again: " + std::to_string(m.failedCheckpoints) +
                " write(s) had failed since step " + std::to_string(*m.firstFailedCheckpoint));
    link.write(m.runId, std::move(b));
    m.failedCheckpoints = 0;
  }
  m.lastCheckpoint = step;
  // Prune by the files on disk (the store's rows follow), so a store outage cannot make the
  // folder grow without bound; but never the newest file the store has recorded: while its
  // successors' rows wait, it is what the store's rows can resume from (resume also finds the
  // newer files on disk).
  std::set<int64_t> keep{step};
  if (auto recorded = link.recordedCheckpoint(m.runId)) keep.insert(*recorded);
  for (int64_t old : pruneCheckpointFiles(m.checkpointDir, c.run.checkpointKeep, m.bestStep,
                                          final ? std::optional<int64_t>(step) : std::nullopt, keep)) {
    link.removeCheckpoint(m.runId, old);
  }
  return true;
}

void flush(Member& m, StoreLink& link) {
  if (m.pending.empty()) return;
  link.write(m.runId, std::move(m.pending));
  m.pending.clear();
}

// The rows of every probe up to now in the store's queue: before a checkpoint, so that a run
// resumed from it has all of them. Returns the seconds waited for probes beside training.
double settleAndFlush(Member& m, BackgroundProbes& beside, StoreLink& link) {
  const double waited = beside.settle(m.index, m.pending);
  flush(m, link);
  return waited;
}

// Validation; a new best is checkpointed (when checkpoints are kept at all) so that the best
// state survives pruning.
void evaluate(Member& m, const data::TokenDataset& data, int64_t step, StoreLink* link,
              BackgroundProbes& beside, GroupResult& result) {
  const auto& c = m.config;
  double v = m.trainer->evaluate(data, c.run.evalBatches);
  m.progress.lossVal = v;
  m.pending.scalar(step, metrics::kLossVal, v);
  m.pending.scalar(step, metrics::kPplVal, std::exp(std::min(v, 700.0)));
  if (std::isfinite(v) && (!m.bestVal || v < *m.bestVal)) {
    m.bestVal = v;
    if (link) {
      m.bestStep = step;
      result.probeSeconds += settleAndFlush(m, beside, *link);
      checkpoint(m, *link, step, false);
    }
  }
}

// The clocks and the stop decision of one training loop.
struct LoopState {
  Clock::time_point start = Clock::now(), lastFlush = start, lastProgress = start,
                    lastStopPoll = start, lastCheckpoint = start, lastHeartbeat = start;
  bool stopping = false;
  std::string stopReason = "on request";
};

// One update of member `m` at `step`, then what is due after it (logged scalars, probes,
// evaluation, a step-cadence checkpoint). Returns false when a stop interrupted the update.
bool stepMember(Member& m, int64_t step, const ExperimentConfig& config,
                const data::TokenDataset& data, BackgroundProbes& probes, StoreLink& link,
                GroupResult& result) {
  const int64_t total = config.optim.steps;
  double tokensPerStep = 0;  // the targets that count: pads do not (document packing)
  for (int micro = 0; micro < config.optim.gradAccum; ++micro) {
    tokensPerStep += static_cast<double>(data.trainTargets(m.trainer->config().seed, step, micro));
  }
  const auto ts = Clock::now();
  train::StepResult r = m.trainer->trainStep(data, step);
  if (r.interrupted) return false;  // stop asked for in the middle of an update: abandoned
  const double dt = since(ts);
  auto& p = m.progress;
  p.step = step + 1;
  p.lossTrain = r.loss;
  p.tokensPerSecond = dt > 0 ? tokensPerStep / dt : 0;
  m.tokensSeen += tokensPerStep;
  if (!r.finite) {
    p.status = store::RunStatus::Diverged;
    p.divergedAt = step;
    m.active = false;
    m.pending.scalar(step, metrics::kLossTrain, r.loss);
    m.pending.event(step, store::EventLevel::Error,
                    "non-finite loss at step " + std::to_string(step) + ": run diverged");
    result.probeSeconds += settleAndFlush(m, probes, link);
    link.finishRun(m.runId, store::RunStatus::Diverged);
    return true;
  }
  if (step % config.run.logEvery == 0 || step + 1 == total) {
    m.pending.scalar(step, metrics::kLossTrain, r.loss);
    m.pending.scalar(step, metrics::kLr, r.lr);
    m.pending.scalar(step, metrics::kGradNorm, r.gradNorm);
    m.pending.scalar(step, metrics::kTokensPerSecond, p.tokensPerSecond);
    m.pending.scalar(step, metrics::kTokensSeen, m.tokensSeen);
    m.pending.layer(step, metrics::kLayerGradNorm, r.layerGradNorms);
  }
  if (step + 1 < total && m.writer) {
    result.probeSeconds += probes.runDue(m.index, m.trainer->model(), step + 1, m.pending);
  }
  if (config.run.evalEvery > 0 && (step + 1) % config.run.evalEvery == 0 && step + 1 < total &&
      m.writer) {
    evaluate(m, data, step + 1, &link, probes, result);
  }
  if (config.run.checkpointEvery > 0 && (step + 1) % config.run.checkpointEvery == 0 &&
      step + 1 < total) {
    result.probeSeconds += settleAndFlush(m, probes, link);
    checkpoint(m, link, step + 1, false);
  }
  return true;
}

// What runs on wall-clock cadences after every step of the group: time-based checkpoints,
// heartbeats, flushing metrics, progress, and deciding whether to stop (a signal, a stop
// request in the store, or a store unwritable for too long).
void afterStep(std::vector<Member>& members, int64_t step, const ExperimentConfig& config,
               const RunGroupOptions& o, StoreLink& link, LoopState& s, BackgroundProbes& probes,
               GroupResult& result, const std::function<void(int64_t)>& report) {
  const int64_t total = config.optim.steps;
  if (!s.stopping && config.run.checkpointMinutes > 0 && step + 1 < total &&
      since(s.lastCheckpoint) >= config.run.checkpointMinutes * 60) {
    for (auto& m : members) {
      if (!m.active) continue;
      result.probeSeconds += settleAndFlush(m, probes, link);
      checkpoint(m, link, step + 1, false);
    }
    s.lastCheckpoint = Clock::now();
  }
  if (since(s.lastHeartbeat) >= 30) {  // liveness for viewers and resumes on other hosts
    for (auto& m : members) {
      if (m.active) link.heartbeat(m.runId);
    }
    s.lastHeartbeat = Clock::now();
  }
  if (since(s.lastFlush) >= o.flushSeconds) {
    for (auto& m : members) flush(m, link);
    link.flush();
    s.lastFlush = Clock::now();
  }
  if (since(s.lastProgress) >= 0.25) {
    report(step + 1);
    s.lastProgress = Clock::now();
  }
  bool stop = s.stopping || (o.stopFlag && o.stopFlag->load());
  if (!stop && since(s.lastStopPoll) >= 1.0) {
    s.lastStopPoll = Clock::now();
    for (auto& m : members) stop = stop || (m.active && link.stopRequested(m.runId));
  }
  if (!stop && link.unwritableSeconds() > o.storeGiveUpSeconds) {
    stop = true;
    s.stopReason = "because the run store stayed unwritable for " +
                   std::to_string(static_cast<int>(link.unwritableSeconds())) + " s (" +
                   link.lastError() + ")";
  }
  // Data-parallel ranks stop together: any rank's reason (a signal, rank 0's store) stops all.
  if (o.dist && o.dist->anyRank(stop) && !stop) {
    stop = true;
    s.stopReason = "on request (to another rank of the data-parallel group)";
  }
  if (stop) s.stopping = true;
}

// The end of the loop: final evaluation, probes and checkpoint for every member still active
// (or a stop event), its status, and the last writes retried for storeGiveUpSeconds.
void finishMembers(std::vector<Member>& members, const data::TokenDataset& data,
                   const ProbeSchedule& probes, BackgroundProbes& beside, StoreLink& link,
                   const LoopState& s, const RunGroupOptions& o, GroupResult& result) {
  for (auto& m : members) {
    if (!m.active) continue;
    const int64_t done = m.progress.step;
    result.probeSeconds += beside.settle(m.index, m.pending);
    if (!m.writer) {  // another data-parallel rank: rank 0 evaluates, probes and checkpoints
    } else if (!s.stopping) {
      evaluate(m, data, done, nullptr, beside, result);
      // Training is over: the final probes (the pruning sweeps above all) get every core
      // unless the config fixed the thread count.
      const bool allCores = m.config.run.threads == 0 && m.trainer->device().is_cpu();
      train::IntraOpThreads threads(allCores ? std::max(1, train::cpuCores()) : torch::get_num_threads());
      result.probeSeconds += probes.runDue(m.trainer->model(), done, /*final=*/true, m.pending);
    } else {
      m.pending.event(done, store::EventLevel::Info,
                      "stopped at step " + std::to_string(done) + " " + s.stopReason);
    }
    flush(m, link);
    auto status = s.stopping ? store::RunStatus::Stopped : store::RunStatus::Finished;
    if (!checkpoint(m, link, done, true)) {
      // The end of a run is a checkpoint that exists: without it the run is not finished (its
      // weights at `done` are lost); it stays resumable from the newest file there is.
      m.progress.unfinishedBecause =
          "its last checkpoint (step " + std::to_string(done) + ") could not be written; " +
          keptCheckpointText(m) +
          (m.lastCheckpoint ? ", where resume continues once there is room"
                            : ": resume starts it again from step 0 once there is room");
      status = store::RunStatus::Stopped;
      store::WriteBatch b;
      b.event(done, store::EventLevel::Error, "not finished: " + m.progress.unfinishedBecause);
      link.write(m.runId, std::move(b));
    }
    m.progress.status = status;
    link.finishRun(m.runId, status);
  }
  // The last writes (statuses, the final checkpoint's row): retried with back-off for another
  // storeGiveUpSeconds from here, so a store that comes back in that time records the stop.
  const auto finishing = Clock::now();
  bool said = false;
  while (!link.flush(true) && since(finishing) <= o.storeGiveUpSeconds) {
    if (!said && o.onNotice) {  // a wait of minutes is never silent
      o.onNotice("the run store is unwritable (" + link.lastError() + "): retrying the runs' last " +
                 "writes (statuses, the final checkpoints' rows) for up to " +
                 std::to_string(static_cast<int>(o.storeGiveUpSeconds)) +
                 " s; Ctrl-C leaves them unrecorded (the checkpoints are on disk)");
      said = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// A data-parallel group failed (a rank died, a collective timed out): rank 0 records why on
// every active run and marks it crashed (its last checkpoint stays for resume).
void markCrashed(std::vector<Member>& members, StoreLink& link, const std::string& why,
                 const RunGroupOptions& o) {
  for (auto& m : members) {
    if (!m.active || !m.writer) continue;
    m.pending.event(m.progress.step, store::EventLevel::Error,
                    "data-parallel training failed after step " + std::to_string(m.progress.step) +
                        ": " + why + (m.lastCheckpoint ? "; resume continues from the checkpoint at step " +
                                                             std::to_string(*m.lastCheckpoint)
                                                       : std::string("; no checkpoint was written")));
    flush(m, link);
    link.finishRun(m.runId, store::RunStatus::Crashed);
    m.progress.status = store::RunStatus::Crashed;
    m.active = false;
  }
  const auto t = Clock::now();
  while (!link.flush(true) && since(t) <= std::min(o.storeGiveUpSeconds, 30.0)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// What the group will cost here, before its first update (experiment/run_cost): an event of
// every run per line, and o.onCost. A resumed run's last train loss, so that a stop before its
// first update here reports that loss rather than 0.
void beforeFirstStep(std::vector<Member>& members, const ExperimentConfig& config,
                     const data::TokenDataset& data, store::RunStore& store,
                     const RunGroupOptions& o, int64_t startStep) {
  if (!members.front().writer) return;  // another data-parallel rank: rank 0 says it
  for (auto& m : members) {
    if (m.progress.step == 0) continue;
    const auto rows =
        store.scalarSeries(m.runId, metrics::kLossTrain, m.progress.step - 1 - config.run.logEvery,
                           m.progress.step - 1);
    if (!rows.empty()) m.progress.lossTrain = rows.back().value;
  }
  RunCost cost =
      estimateRunCost(config, startStep, static_cast<double>(data.trainTokens()),
                      static_cast<double>(data.valTokens()),
                      calibrateTime(store.listRuns(), config.run.device == "cpu" ? "cpu" : "cuda"));
  cost.checkpointDir = std::filesystem::path(members.front().checkpointDir).parent_path().string();
  cost.diskFreeBytes = freeBytesAt(cost.checkpointDir);
  for (const auto& line : describeRunCost(cost)) {
    const auto level = line.warning ? store::EventLevel::Warning : store::EventLevel::Info;
    for (auto& m : members) m.pending.event(startStep, level, line.text);
    if (o.onCost) o.onCost(line.text, line.warning);
  }
}

// What the first step's time (one update of each member) makes of the whole run.
void afterFirstStepTimed(std::vector<Member>& members, double seconds,
                         const ExperimentConfig& config, const RunGroupOptions& o,
                         int64_t startStep) {
  if (!members.front().writer) return;
  const std::string line = describeFirstStep(seconds, config.optim.steps - startStep,
                                             static_cast<int>(members.size()), startStep > 0);
  for (auto& m : members) m.pending.event(startStep + 1, store::EventLevel::Info, line);
  if (o.onCost) o.onCost(line, false);
}

}  // namespace

// Trains every active member from `startStep` to the configured number of steps.
void trainLoop(std::vector<Member>& members, const ExperimentConfig& config,
               const data::TokenDataset& data, store::RunStore& store,
               const RunGroupOptions& o, int64_t startStep, GroupResult& result,
               const std::function<void()>& afterFirstStep) {
  LoopState state;
  StoreLink link(store);
  link.onNotice = o.onNotice;
  for (auto& m : members) {
    m.trainer->setInterruptFlag(o.stopFlag);
    try {  // the newest checkpoint the store already names stays until a newer row lands
      const auto rows = store.checkpoints(m.runId);
      if (m.writer && !rows.empty()) link.noteRecorded(m.runId, rows.back().step);
    } catch (const std::exception&) {
    }
    if (int n = removeTemporaryFiles(m.checkpointDir); n > 0) {
      m.pending.event(startStep, store::EventLevel::Info,
                      "removed " + std::to_string(n) + " unfinished checkpoint file(s) (*.tmp)");
    }
  }
  beforeFirstStep(members, config, data, store, o, startStep);
  ProbeSchedule probes(config.probes, data, members.front().trainer->device());
  const int trainingThreads = train::settledThreadCount();
  BackgroundProbes beside(probes, members.size(),
                          config.probes.besideTraining &&
                          probesFitBeside(members.front().trainer->device(), trainingThreads,
                                          train::cpuCores(), o.dist ? o.dist->worldSize() : 1));
  for (size_t i = 0; i < members.size(); ++i) members[i].index = i;
  if (startStep == 0) {  // the state at initialisation
    for (auto& m : members) {
      if (m.writer) result.probeSeconds += beside.runDue(m.index, m.trainer->model(), 0, m.pending);
    }
  }
  // The cadences count from here (after the probes of the initial state).
  state.lastFlush = state.lastProgress = state.lastStopPoll = state.lastCheckpoint =
      state.lastHeartbeat = Clock::now();
  const int64_t total = config.optim.steps;
  auto report = [&](int64_t step) {
    if (!o.onProgress) return;
    GroupProgress gp;
    gp.step = step;
    gp.totalSteps = total;
    gp.elapsedSeconds = since(state.start);
    const double done = static_cast<double>(step - startStep);
    gp.etaSeconds = done > 0 ? gp.elapsedSeconds / done * static_cast<double>(total - step) : 0;
    for (const auto& m : members) gp.members.push_back(m.progress);
    o.onProgress(gp);
  };
  try {
    for (int64_t step = startStep; step < total && !state.stopping; ++step) {
      const auto stepStarted = Clock::now();
      bool anyActive = false;
      for (auto& m : members) {
        if (!m.active) continue;
        anyActive = true;
        if (m.progress.step > step) continue;  // resumed a step ahead of the others (a stop
                                               // came between two members' updates)
        if (!stepMember(m, step, config, data, beside, link, result)) {
          state.stopping = true;
          break;
        }
      }
      if (!anyActive) break;
      if (step == startStep && !state.stopping) {
        afterFirstStepTimed(members, since(stepStarted), config, o, startStep);
      }
      afterStep(members, step, config, o, link, state, beside, result, report);
      if (step == startStep && afterFirstStep) afterFirstStep();
    }
  } catch (const distributed::CommError& e) {
    markCrashed(members, link, e.what(), o);
    throw;
  }
  finishMembers(members, data, probes, beside, link, state, o, result);
  result.probeBesideSeconds = beside.besideSeconds();
  int64_t reached = startStep;
  for (const auto& m : members) reached = std::max(reached, m.progress.step);
  report(std::min<int64_t>(reached, total));
  result.seconds = since(state.start);
  for (const auto& m : members) result.members.push_back(m.progress);
  if (!link.idle()) {
    throw std::runtime_error("the run store '" + store.path() + "' stayed unwritable (" +
                             link.lastError() + "); the checkpoints are on disk, but the last " +
                             "metrics and statuses could not be recorded");
  }
}

}  // namespace depthlab::experiment

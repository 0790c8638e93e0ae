// The run loop; see run_group.h.
#include "experiment/run_group.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>

#include "data/corpus.h"
#include "data/token_dataset.h"
#include "experiment/probe_schedule.h"
#include "train/checkpoint.h"
#include "train/micro_batch.h"
#include "train/trainer.h"
#include "util/paths.h"

namespace depthlab::experiment {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Member {
  int64_t runId = 0;
  std::unique_ptr<train::Trainer> trainer;
  MemberProgress progress;
  store::WriteBatch pending;
  bool active = true;
};

std::string checkpointPath(const RunGroupOptions& o, int64_t runId, int64_t step) {
  std::string dir = o.checkpointDir.empty()
                        ? (std::filesystem::path(util::dataDir()) / "checkpoints").string()
                        : o.checkpointDir;
  return (std::filesystem::path(dir) / ("run-" + std::to_string(runId)) /
          ("step-" + std::to_string(step) + ".ckpt")).string();
}

void checkpoint(Member& m, store::RunStore& store, const RunGroupOptions& o, int64_t step) {
  train::CheckpointMeta meta;
  meta.step = step;
  meta.scheme = m.progress.scheme;
  meta.runId = m.runId;
  meta.config = toJson(m.trainer->config());
  const std::string path = checkpointPath(o, m.runId, step);
  std::string sum = train::saveCheckpoint(path, m.trainer->model(), &m.trainer->optimizer(), meta);
  auto now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch());
  store.addCheckpoint(m.runId, {step, path, sum, now.count()});
}

void flush(Member& m, store::RunStore& store) {
  if (m.pending.empty()) return;
  store.write(m.runId, m.pending);
  m.pending.clear();
}

void evaluate(Member& m, const data::TokenDataset& data, int64_t step) {
  const auto& c = m.trainer->config();
  double v = m.trainer->evaluate(data, c.run.evalBatches);
  m.progress.lossVal = v;
  m.pending.scalar(step, "loss_val", v);
  m.pending.scalar(step, "ppl_val", std::exp(std::min(v, 700.0)));
}

// Trains every active member from `startStep` to the configured number of steps.
void trainLoop(std::vector<Member>& members, const ExperimentConfig& config,
               const data::TokenDataset& data, store::RunStore& store,
               const RunGroupOptions& o, int64_t startStep, GroupResult& result) {
  const auto t0 = Clock::now();
  ProbeSchedule probes(config.probes, data, members.front().trainer->device());
  if (startStep == 0) {  // the state at initialisation
    for (auto& m : members) result.probeSeconds += probes.runDue(m.trainer->model(), 0, false, m.pending);
  }
  auto lastFlush = Clock::now(), lastProgress = Clock::now(), lastStopPoll = Clock::now();
  const int64_t total = config.optim.steps;
  const double tokensPerStep = static_cast<double>(config.optim.batchSize) *
                               config.model.seqLen * config.optim.gradAccum;
  auto report = [&](int64_t step) {
    if (!o.onProgress) return;
    GroupProgress gp;
    gp.step = step;
    gp.totalSteps = total;
    gp.elapsedSeconds = since(t0);
    const double done = static_cast<double>(step - startStep);
    gp.etaSeconds = done > 0 ? gp.elapsedSeconds / done * static_cast<double>(total - step) : 0;
    for (const auto& m : members) gp.members.push_back(m.progress);
    o.onProgress(gp);
  };
  bool stopping = false;
  int64_t step = startStep;
  for (; step < total; ++step) {
    bool anyActive = false;
    for (auto& m : members) {
      if (!m.active) continue;
      anyActive = true;
      const auto ts = Clock::now();
      train::StepResult r = m.trainer->trainStep(data, step);
      const double dt = since(ts);
      auto& p = m.progress;
      p.step = step + 1;
      p.lossTrain = r.loss;
      p.tokensPerSecond = dt > 0 ? tokensPerStep / dt : 0;
      if (!r.finite) {
        p.status = "diverged";
        p.divergedAt = step;
        m.active = false;
        m.pending.scalar(step, "loss_train", r.loss);
        m.pending.event(step, store::EventLevel::Error,
                        "non-finite loss at step " + std::to_string(step) + ": run diverged");
        flush(m, store);
        store.finishRun(m.runId, store::RunStatus::Diverged);
        continue;
      }
      if (step % config.run.logEvery == 0 || step + 1 == total) {
        m.pending.scalar(step, "loss_train", r.loss);
        m.pending.scalar(step, "lr", r.lr);
        m.pending.scalar(step, "grad_norm", r.gradNorm);
        m.pending.scalar(step, "tokens_per_s", p.tokensPerSecond);
        m.pending.layer(step, "grad_norm", r.layerGradNorms);
      }
      if (step + 1 < total) {
        result.probeSeconds += probes.runDue(m.trainer->model(), step + 1, false, m.pending);
      }
      if (config.run.evalEvery > 0 && (step + 1) % config.run.evalEvery == 0 && step + 1 < total) {
        evaluate(m, data, step + 1);
      }
      if (config.run.checkpointEvery > 0 && (step + 1) % config.run.checkpointEvery == 0 &&
          step + 1 < total) {
        flush(m, store);
        checkpoint(m, store, o, step + 1);
      }
    }
    if (!anyActive) break;
    if (since(lastFlush) >= o.flushSeconds) {
      for (auto& m : members) flush(m, store);
      lastFlush = Clock::now();
    }
    if (since(lastProgress) >= 0.25) {
      report(step + 1);
      lastProgress = Clock::now();
    }
    bool stop = o.stopFlag && o.stopFlag->load();
    if (!stop && since(lastStopPoll) >= 1.0) {
      lastStopPoll = Clock::now();
      for (auto& m : members) stop = stop || (m.active && store.stopRequested(m.runId));
    }
    if (stop) {
      stopping = true;
      ++step;
      break;
    }
  }
  // Finish: final evaluation and checkpoint for every member still active.
  for (auto& m : members) {
    if (!m.active) continue;
    const int64_t done = std::min<int64_t>(step, total);
    if (!stopping) {
      evaluate(m, data, done);
      result.probeSeconds += probes.runDue(m.trainer->model(), done, /*final=*/true, m.pending);
    }
    if (stopping) {
      m.pending.event(done, store::EventLevel::Info,
                      "stopped at step " + std::to_string(done) + " on request");
    }
    flush(m, store);
    checkpoint(m, store, o, done);
    m.progress.status = stopping ? "stopped" : "finished";
    store.finishRun(m.runId, stopping ? store::RunStatus::Stopped : store::RunStatus::Finished);
  }
  report(std::min<int64_t>(step, total));
  result.seconds = since(t0);
  for (const auto& m : members) result.members.push_back(m.progress);
}

// Loads the corpus (its vocabulary sets the model's), then, for a new group, lets
// `beforeBatching` settle the micro-batch before the dataset is cut into batches.
data::TokenDataset loadDataset(ExperimentConfig& config,
                               const std::function<void()>& beforeBatching = {}) {
  auto corpus = data::loadCorpusTokens(config.data);
  config.model.vocabSize = corpus.vocabSize;
  if (beforeBatching) beforeBatching();
  return data::TokenDataset(std::move(corpus.tokens), corpus.vocabSize, config.data.valFraction,
                            config.model.seqLen, config.optim.batchSize);
}

void applyThreads(const ExperimentConfig& config) {
  const int threads = config.run.threads > 0 ? config.run.threads : train::defaultThreads(config.model);
  torch::set_num_threads(threads);
}

std::string defaultGroupName(const ExperimentConfig& c) {
  char buf[32];
  std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof(buf), "%Y%m%d-%H%M%S", std::localtime(&t));
  return (c.preset.empty() ? std::string("custom") : c.preset) + "-" + buf;
}

}  // namespace

GroupResult runGroup(const ExperimentConfig& input, store::RunStore& store,
                     const RunGroupOptions& options) {
  requireValid(input);
  ExperimentConfig config = input;
  const torch::Device device = train::resolveDevice(config.run.device);
  std::string microBatchChoice;
  // bad corpora fail here, before any run; so does a model that does not fit the GPU at all
  data::TokenDataset dataset = loadDataset(config, [&] {
    microBatchChoice = train::chooseMicroBatch(config, device);
  });
  applyThreads(config);
  if (config.name.empty()) config.name = defaultGroupName(config);

  GroupResult result;
  result.groupName = config.name;
  std::vector<Member> members;
  for (const auto& scheme : config.schemes) {
    Member m;
    m.trainer = std::make_unique<train::Trainer>(config, scheme, device);
    ExperimentConfig runConfig = config;
    runConfig.schemes = {scheme};
    store::NewRun nr;
    nr.name = config.name + " " + scheme + " s" + std::to_string(config.run.seed);
    nr.groupName = config.name;
    nr.scheme = scheme;
    nr.configJson = toJson(runConfig).dump();
    nr.device = train::describeDevice(device);
    nr.seed = config.run.seed;
    m.runId = store.createRun(nr);
    m.progress = {m.runId, scheme, "running", 0, 0, std::nullopt, 0, std::nullopt};
    members.push_back(std::move(m));
  }
  for (auto& m : members) {
    store.markRunning(m.runId);
    if (microBatchChoice.empty()) continue;
    store::WriteBatch b;
    b.event(0, store::EventLevel::Info, microBatchChoice);
    store.write(m.runId, b);
  }
  trainLoop(members, config, dataset, store, options, 0, result);
  return result;
}

GroupResult resumeRun(int64_t runId, store::RunStore& store, const RunGroupOptions& options) {
  auto run = store.run(runId);
  if (!run) throw std::runtime_error("no run with id " + std::to_string(runId));
  auto ckpts = store.checkpoints(runId);
  if (ckpts.empty()) throw std::runtime_error("run " + std::to_string(runId) + " has no checkpoint");
  auto j = nlohmann::json::parse(run->configJson, nullptr, false);
  if (j.is_discarded()) throw std::runtime_error("run " + std::to_string(runId) + " has a broken config");
  ExperimentConfig config = configFromJson(j);
  const torch::Device device = train::resolveDevice(config.run.device);
  data::TokenDataset dataset = loadDataset(config);
  applyThreads(config);

  Member m;
  m.runId = runId;
  m.trainer = std::make_unique<train::Trainer>(config, run->scheme, device);
  auto meta = train::loadCheckpoint(ckpts.back().path, m.trainer->model(),
                                    &m.trainer->optimizer(), device);
  m.progress = {runId, run->scheme, "running", meta.step, 0, std::nullopt, 0, std::nullopt};
  GroupResult result;
  result.groupName = run->groupName;
  if (meta.step >= config.optim.steps) {
    result.members.push_back(m.progress);
    result.members.back().status = store::toString(run->status);
    return result;
  }
  store.markRunning(runId);
  store::WriteBatch b;
  b.event(meta.step, store::EventLevel::Info, "resumed from step " + std::to_string(meta.step));
  store.write(runId, b);
  std::vector<Member> members;
  members.push_back(std::move(m));
  trainLoop(members, config, dataset, store, options, meta.step, result);
  return result;
}

}  // namespace depthlab::experiment

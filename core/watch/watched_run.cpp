// See watched_run.h.
#include "watch/watched_run.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <set>
#include <stdexcept>

#include "experiment/experiment_config.h"
#include "experiment/group_names.h"
#include "experiment/probe_schedule.h"
#include "model/scheme_catalogue.h"
#include "probes/depth_probes.h"

namespace depthlab::watch {

namespace {

// Rows kept for a later write while the database refuses them; older rows beyond it are
// dropped (a watched loop must never grow without bound because a disk is full).
constexpr size_t kMaxPendingValues = 4'000'000;

double steadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

nlohmann::json toJson(const WatchRecord& r) {
  return {{"framework", r.framework},  {"model_class", r.modelClass},
          {"layers", r.layersPath},    {"device", r.device},
          {"probe_rows", r.probeRows}, {"probe_length", r.probeLength}};
}

void checkSpec(const WatchSpec& s) {
  if (s.nLayers < 1) throw std::invalid_argument("a watched model needs at least one block");
  if (s.dModel < 1) throw std::invalid_argument("a watched model's width must be positive");
  if (s.nHeads < 1 || s.dModel % s.nHeads != 0) {
    throw std::invalid_argument("heads (" + std::to_string(s.nHeads) + ") must divide the width (" +
                                std::to_string(s.dModel) + ")");
  }
  if (!model::findScheme(s.scheme)) {
    throw std::invalid_argument("unknown scheme '" + s.scheme +
                                "' (one of the lab's scheme ids, "
                                "such as pre_ln or lns)");
  }
}

}  // namespace

std::string watchedConfigJson(const WatchSpec& spec) {
  experiment::ExperimentConfig c;
  c.name = spec.name.empty() ? "watched" : spec.name;
  c.schemes = {spec.scheme};
  c.model.nLayers = spec.nLayers;
  c.model.dModel = spec.dModel;
  c.model.nHeads = spec.nHeads;
  if (spec.vocabSize > 0) c.model.vocabSize = spec.vocabSize;
  if (spec.record.probeLength > 0) c.model.seqLen = static_cast<int>(spec.record.probeLength);
  if (spec.plannedSteps > 0) c.optim.steps = static_cast<int>(spec.plannedSteps);
  c.probes = spec.probes;
  c.probes.probeBatch = static_cast<int>(std::max<int64_t>(spec.record.probeRows, 1));
  c.run.seed = spec.seed;
  auto j = experiment::toJson(c);
  j["watch"] = toJson(spec.record);
  return j.dump();
}

WatchedRun::WatchedRun(const std::string& storePath, const WatchSpec& spec)
    : m_store(store::RunStore::open(storePath)), m_spec(spec) {
  checkSpec(spec);
  if (m_spec.name.empty()) m_spec.name = "watched";
  store::NewRun run;
  run.name = m_spec.name;
  run.scheme = m_spec.scheme;
  run.configJson = watchedConfigJson(m_spec);
  run.device =
      "python " + (m_spec.record.device.empty() ? std::string("cpu") : m_spec.record.device);
  run.seed = m_spec.seed;
  auto [group, ids] = m_store.createGroup(
      {run},
      [&](const std::set<std::string>& taken) {
        return experiment::uniqueGroupName("watch-" + m_spec.name, taken);
      },
      [](const std::string&, store::NewRun&) {});
  m_group = group;
  m_runId = ids.front();
  // A training loop waits at most this long for a viewer's lock before keeping its rows.
  m_store.setBusyTimeout(1000);
  m_store.markRunning(m_runId);
  m_store.addTag(m_runId, "watched");
  const auto& r = m_spec.record;
  event(0, store::EventLevel::Info,
        "watching " + (r.modelClass.empty() ? std::string("a model") : r.modelClass) +
            " from a Python training loop (" + r.framework + ", pid " +
            std::to_string(m_store.run(m_runId)->pid) + "): " + std::to_string(spec.nLayers) +
            " blocks at " + (r.layersPath.empty() ? std::string("?") : r.layersPath) + ", width " +
            std::to_string(spec.dModel) + ", probe batch " + std::to_string(r.probeRows) + " x " +
            std::to_string(r.probeLength));
  flush(true);
}

WatchedRun::~WatchedRun() {
  if (m_finished) return;
  try {
    event(std::nullopt, store::EventLevel::Warning,
          "the watch ended without finish(): the run is marked stopped");
    write();
    m_store.finishRun(m_runId, store::RunStatus::Stopped);
  } catch (...) {  // a destructor must not throw; the run then reads crashed once the process ends
  }
}

void WatchedRun::scalar(int64_t step, const std::string& key, double value) {
  m_pending.scalar(step, key, value);
}

void WatchedRun::layer(int64_t step, const std::string& metric, std::vector<float> values) {
  if (values.size() != static_cast<size_t>(m_spec.nLayers)) {
    throw std::invalid_argument("'" + metric + "' has " + std::to_string(values.size()) +
                                " values; the watched model has " + std::to_string(m_spec.nLayers) +
                                " blocks");
  }
  m_pending.layer(step, metric, std::move(values));
}

void WatchedRun::event(std::optional<int64_t> step, store::EventLevel level,
                       const std::string& message) {
  m_pending.event(step, level, message);
}

void WatchedRun::forward(int64_t step, const model::ForwardTrace& trace,
                         const torch::Tensor& targets, double probeLoss, bool matrix) {
  if (trace.blockInputs.size() != static_cast<size_t>(m_spec.nLayers) + 1) {
    throw std::invalid_argument("the probe pass traced " +
                                std::to_string(trace.blockInputs.size()) +
                                " residual streams; the watched model has " +
                                std::to_string(m_spec.nLayers) + " blocks (L + 1 expected)");
  }
  auto f = probes::statsOfTrace(trace, targets, {m_spec.probes.lastTokenOnly, matrix});
  f.probeLoss = probeLoss;
  experiment::addForwardRows(m_pending, step, f, m_spec.probes, matrix);
  flush(true);
}

bool WatchedRun::flush(bool force) {
  if (!force && steadySeconds() - m_lastWrite < m_flushSeconds) return m_lastError.empty();
  return write();
}

bool WatchedRun::write() {
  m_lastWrite = steadySeconds();
  try {
    if (!m_pending.empty()) m_store.write(m_runId, m_pending);
    m_store.heartbeat(m_runId);
    m_pending.clear();
    m_lastError.clear();
    return true;
  } catch (const std::exception& e) {
    ++m_failedWrites;
    m_lastError = e.what();
    if (m_pending.valueCount() > kMaxPendingValues) m_pending.clear();
    return false;
  }
}

bool WatchedRun::stopRequested() {
  try {
    return m_store.stopRequested(m_runId);
  } catch (const std::exception&) {
    return false;
  }
}

void WatchedRun::finish(store::RunStatus status, int64_t lastStep) {
  if (m_finished) return;
  if (lastStep > 0 && lastStep != m_spec.plannedSteps) {
    m_spec.plannedSteps = lastStep;
    m_store.setRunConfig(m_runId, watchedConfigJson(m_spec));
  }
  event(lastStep, store::EventLevel::Info,
        std::string("the watched loop ended: ") + store::toString(status) + " at step " +
            std::to_string(lastStep));
  if (!write())
    throw store::StoreError("could not write the watched run's last rows: " + m_lastError);
  m_store.finishRun(m_runId, status);
  m_finished = true;
}

}  // namespace depthlab::watch

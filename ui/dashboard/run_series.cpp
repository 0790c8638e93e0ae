// See run_series.h: RunData's accessors and the one reader of a run's series.
#include "dashboard/run_series.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include "dashboard/panel_specs.h"
#include "experiment/run_config.h"
#include "store/metric_catalogue.h"

namespace depthlab::ui {

int64_t RunData::stepsDone() const {
  if (series) {  // its checkpoints' steps: the probe loss is stored at each
    auto p = scalars.find(metrics::kLossProbe);
    return p == scalars.end() || p->second.empty() ? 0 : p->second.back().step;
  }
  auto it = scalars.find(metrics::kLossTrain);
  return it == scalars.end() || it->second.empty() ? 0 : it->second.back().step + 1;
}

double RunData::recentTokensPerSecond() const {
  auto it = scalars.find(metrics::kTokensPerSecond);
  if (it == scalars.end() || it->second.empty()) return 0;
  const auto& v = it->second;
  const size_t n = std::min<size_t>(20, v.size());
  double sum = 0;  // the mean of the last few steps: one step's rate is noisy
  for (size_t i = v.size() - n; i < v.size(); ++i) sum += v[i].value;
  return sum / static_cast<double>(n);
}

double RunData::secondsPerStep() const {
  const double tps = recentTokensPerSecond();
  return tps > 0 && tokensPerStep > 0 ? tokensPerStep / tps : 0;
}

int64_t RunData::stepsLeft() const {
  return std::max<int64_t>(0, static_cast<int64_t>(totalSteps) - stepsDone());
}

std::function<double(double)> RunData::axisMap(const QString& mode) const {
  if (mode == QLatin1String("tokens")) {
    const double t = tokensPerStep;
    return [t](double step) { return step * t; };
  }
  if (mode != QLatin1String("time")) return [](double step) { return step; };
  // Cumulative training seconds at each measured step: each step takes tokens / rate.
  std::vector<std::pair<double, double>> at{{0.0, 0.0}};
  if (auto it = scalars.find(metrics::kTokensPerSecond); it != scalars.end()) {
    double seconds = 0, last = 0;
    for (const auto& p : it->second) {
      if (!(p.value > 0) || tokensPerStep <= 0) continue;
      const double step = static_cast<double>(p.step) + 1;
      seconds += (step - last) * tokensPerStep / p.value;
      last = step;
      at.emplace_back(step, seconds);
    }
  }
  return [at](double step) {
    auto it = std::lower_bound(at.begin(), at.end(), std::make_pair(step, -1.0));
    if (it == at.end()) {  // past the last measurement: its rate
      if (at.size() < 2) return 0.0;
      const auto& a = at[at.size() - 2];
      const auto& b = at.back();
      return b.second +
             (step - b.first) * (b.second - a.second) / std::max(1e-9, b.first - a.first);
    }
    if (it == at.begin()) return it->second;
    const auto& a = *(it - 1);
    return a.second +
           (step - a.first) * (it->second - a.second) / std::max(1e-9, it->first - a.first);
  };
}

const store::Matrix* RunData::angularAt(int64_t step) const {
  const store::Matrix* best = nullptr;
  for (const auto& m : angular) {
    if (m.step <= step) best = &m;
  }
  return best;
}

namespace {

// The per-layer metrics drawn as curves: their overviews are built with the series.
const std::vector<std::string>& curveMetrics() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out;
    for (const auto* spec : dashboard::panelsOfKind(dashboard::PanelKind::LayerCurves)) {
      for (const auto& m : spec->metrics) out.push_back(m.toStdString());
    }
    return out;
  }();
  return keys;
}

}  // namespace

// What the dashboard draws, from the metric catalogue (store/metric_catalogue.h).
const std::vector<std::string>& runScalarKeys() {
  static const std::vector<std::string> keys = [] {
    auto k = metrics::keysFor(metrics::Kind::Scalar, metrics::kDashboard);
    k.push_back(metrics::kTokensSeen);  // the run line's tokens of the budget, and the ETA
    k.push_back(metrics::kLossProbe);   // a checkpoint series' loss curve (its probe text's)
    return k;
  }();
  return keys;
}

const std::vector<std::string>& runLayerMetrics() {
  static const std::vector<std::string> keys = [] {
    auto k = metrics::keysFor(metrics::Kind::PerLayer, metrics::kDashboard);
    k.push_back(metrics::kPruneDeltaError);  // the pruning bars' error bars
    k.push_back(metrics::kLensTop1);         // the lens figure's agreement column
    return k;
  }();
  return keys;
}

namespace {

// The facts of the run's config: planned steps, layers, thresholds, tokens per step.
void readConfigFacts(const store::RunInfo& info, RunData& d) {
  d.info = info;
  const auto origin = experiment::originOf(info);  // one parse of the config for these
  d.imported = origin.snapshot();
  d.series = origin.series;
  if (origin.imported) {  // a series too: steps and tokens are its checkpoints'
    d.totalSteps = 0;
    if (const auto c = experiment::tryConfigOf(info)) {
      d.nLayers = c->model.nLayers;
      d.thresholds = probes::layerThresholds(c->probes);
    }
  } else if (const auto c = experiment::tryConfigOf(info)) {
    // Read from TensorBoard: no plan, its course is what it logged (0: the steps it holds).
    d.totalSteps = origin.tensorBoard ? 0 : c->optim.steps;
    d.thresholds = probes::layerThresholds(c->probes);
    d.nLayers = c->model.nLayers;
    // A watched loop's batch is its own (its config's is a default): tokens only where the
    // loop logs tokens_seen (readNewRows).
    d.tokensPerStep =
        origin.watched || origin.tensorBoard
            ? 0.0
            : static_cast<double>(c->optim.batchSize) * c->model.seqLen * c->optim.gradAccum;
  }
}

// Scalars and per-layer series: only the rows after the last step each already holds.
void readNewRows(store::RunStore& store, int64_t id, RunData& d) {
  for (const auto& k : runScalarKeys()) {
    auto& v = d.scalars[k];
    auto fresh = store.scalarSeries(id, k, v.empty() ? INT64_MIN : v.back().step + 1);
    v.insert(v.end(), fresh.begin(), fresh.end());
  }
  // Document packing pads its rows: the tokens an update reads are those that count, as
  // tokens/s counts them, not batch x sequence slots.
  if (const auto& seen = d.scalars[metrics::kTokensSeen]; !seen.empty() && seen.back().value > 0) {
    d.tokensPerStep = seen.back().value / static_cast<double>(seen.back().step + 1);
  }
  for (const auto& m : runLayerMetrics()) {
    auto& v = d.layers[m];
    auto fresh = store.layerSeries(id, m, v.steps.empty() ? INT64_MIN : v.steps.back() + 1);
    if (v.steps.empty()) {
      v = std::move(fresh);
    } else if (fresh.nLayers == v.nLayers) {
      v.steps.insert(v.steps.end(), fresh.steps.begin(), fresh.steps.end());
      v.values.insert(v.values.end(), fresh.values.begin(), fresh.values.end());
    }
  }
}

// The angular matrices of steps after the last held; the latest block-pruning and skip-effect
// matrices.
void readMatrices(store::RunStore& store, int64_t id, RunData& d) {
  const int64_t lastMatrix = d.angular.empty() ? INT64_MIN : d.angular.back().step;
  for (int64_t step : store.matrixSteps(id, metrics::kAngular)) {
    if (step <= lastMatrix) continue;
    if (auto m = store.matrix(id, metrics::kAngular, step)) d.angular.push_back(std::move(*m));
  }
  if (auto steps = store.matrixSteps(id, metrics::kBlockPrune); !steps.empty()) {
    d.blockPrune = store.matrix(id, metrics::kBlockPrune, steps.back());
    d.blockPruneError = store.matrix(id, metrics::kBlockPruneError, steps.back());
  }
  if (auto steps = store.matrixSteps(id, metrics::kSkipEffect); !steps.empty()) {
    d.skipEffect = store.matrix(id, metrics::kSkipEffect, steps.back());
  }
  for (const char* key : {metrics::kTaskAccPruned, metrics::kTaskAccNormPruned,
                          metrics::kTaskLossPruned, metrics::kTaskPruneFirst}) {
    if (auto steps = store.matrixSteps(id, key); !steps.empty()) {
      if (auto m = store.matrix(id, key, steps.back())) d.taskPruning[key] = std::move(*m);
    }
  }
  if (!d.taskPruning.empty()) {
    const auto latest = store.latestScalars(id);
    if (auto it = latest.find(metrics::kTaskChance); it != latest.end()) {
      d.taskChance = it->second.value;
    }
  }
}

}  // namespace

void readRunSeries(store::RunStore& store, const store::RunInfo& info, RunData& d) {
  readConfigFacts(info, d);
  readNewRows(store, info.id, d);
  readMatrices(store, info.id, d);
  for (const auto& m : curveMetrics()) {
    if (auto lit = d.layers.find(m); lit != d.layers.end())
      d.overview[m] = layerOverview(lit->second, kOverviewColumns);
  }
  if (info.status == store::RunStatus::Diverged) {
    for (const auto& e : store.events(info.id)) {
      if (e.level == store::EventLevel::Error && e.step) d.divergedAt = e.step;
    }
  }
}

}  // namespace depthlab::ui

// See group_data.h.
#include "dashboard/group_data.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <iterator>

#include <QThread>

#include "dashboard/panel_specs.h"
#include "experiment/run_config.h"
#include "experiment/run_cost.h"
#include "store/metric_catalogue.h"

namespace depthlab::ui {

// What the dashboard draws, from the metric catalogue (store/metric_catalogue.h).
const std::vector<std::string> GroupData::kScalarKeys = [] {
  auto keys = metrics::keysFor(metrics::Kind::Scalar, metrics::kDashboard);
  keys.push_back(metrics::kTokensSeen);  // the run line's tokens of the budget, and the ETA
  return keys;
}();
const std::vector<std::string> GroupData::kLayerMetrics = [] {
  auto keys = metrics::keysFor(metrics::Kind::PerLayer, metrics::kDashboard);
  keys.push_back(metrics::kPruneDeltaError);  // the pruning bars' error bars
  return keys;
}();

QString RunData::statusLine(const QString& label, std::optional<double> etaSeconds) const {
  const QString name = label.isEmpty() ? QString::fromStdString(info.scheme) : label;
  if (imported) {
    auto it = layers.find(metrics::kVariance);
    const bool probed = it != layers.end() && !it->second.steps.empty();
    return probed ? QStringLiteral("%1 — imported model (not trained here) · probed · %2")
                        .arg(name, QString::fromStdString(info.device))
                  : QStringLiteral("%1 — imported model · not probed yet: depthlab-cli analyze --run %2 "
                                   "--corpus TEXT")
                        .arg(name)
                        .arg(info.id);
  }
  QString state = QString::fromLatin1(store::toString(info.status));
  if (divergedAt) state = QStringLiteral("diverged at step %1").arg(*divergedAt);
  const int64_t step = stepsDone();
  const double tps = recentTokensPerSecond();
  // Tokens seen of the budget: what an overnight run has read of what it will read.
  const QString tokens =
      tokensPerStep > 0
          ? QStringLiteral(" · %1 / %2 tokens")
                .arg(QString::fromStdString(experiment::formatCount(static_cast<double>(step) * tokensPerStep)),
                     QString::fromStdString(experiment::formatCount(totalSteps * tokensPerStep)))
          : QString();
  return QStringLiteral("%1 — step %2/%3%4 · %5 tok/s · ETA %6 · %7 · %8")
      .arg(label.isEmpty() ? QString::fromStdString(info.scheme) : label)
      .arg(step)
      .arg(totalSteps)
      .arg(tokens, tps > 0 ? QString::number(tps, 'f', 0) : QStringLiteral("-"),
           etaSeconds ? etaText(*etaSeconds) : QStringLiteral("-"),
           QString::fromStdString(info.device), state);
}

QString etaText(double seconds) {
  const int64_t secs = std::llround(std::max(0.0, seconds));
  if (secs < 3600) return QStringLiteral("%1:%2").arg(secs / 60).arg(secs % 60, 2, 10, QLatin1Char('0'));
  if (secs < 48 * 3600) {
    return QStringLiteral("%1:%2:%3")
        .arg(secs / 3600)
        .arg(secs / 60 % 60, 2, 10, QLatin1Char('0'))
        .arg(secs % 60, 2, 10, QLatin1Char('0'));
  }
  return QString::fromStdString(experiment::formatLongDuration(seconds));
}

int64_t RunData::stepsDone() const {
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
      return b.second + (step - b.first) * (b.second - a.second) / std::max(1e-9, b.first - a.first);
    }
    if (it == at.begin()) return it->second;
    const auto& a = *(it - 1);
    return a.second + (step - a.first) * (it->second - a.second) / std::max(1e-9, it->first - a.first);
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

bool GroupData::reload(store::RunStore& store, const std::vector<int64_t>& changed) {
  m_loadedOn = QThread::currentThreadId();
  bool any = false;
  for (const auto& info : store.listRuns()) {
    if (QString::fromStdString(info.groupName) != m_group) continue;
    auto it = std::find_if(m_runs.begin(), m_runs.end(),
                           [&](const RunData& r) { return r.info.id == info.id; });
    const bool isNew = it == m_runs.end();
    if (!isNew && !changed.empty() &&
        std::find(changed.begin(), changed.end(), info.id) == changed.end()) {
      continue;
    }
    // Incremental: an existing run only fetches rows after the last step it already holds.
    RunData d = isNew ? RunData{} : std::move(*it);
    d.info = info;
    d.imported = experiment::isImportedRun(info);
    if (d.imported) {
      d.totalSteps = 0;
      if (const auto c = experiment::tryConfigOf(info)) {
        d.nLayers = c->model.nLayers;
        d.thresholds = analysis::layerThresholds(c->probes);
      }
    } else if (const auto c = experiment::tryConfigOf(info)) {
      d.totalSteps = c->optim.steps;
      d.thresholds = analysis::layerThresholds(c->probes);
      d.nLayers = c->model.nLayers;
      d.tokensPerStep = static_cast<double>(c->optim.batchSize) * c->model.seqLen * c->optim.gradAccum;
    }
    for (const auto& k : kScalarKeys) {
      auto& v = d.scalars[k];
      auto fresh = store.scalarSeries(info.id, k, v.empty() ? INT64_MIN : v.back().step + 1);
      v.insert(v.end(), fresh.begin(), fresh.end());
    }
    // Document packing pads its rows: the tokens an update reads are those that count, as
    // tokens/s counts them, not batch x sequence slots.
    if (const auto& seen = d.scalars[metrics::kTokensSeen]; !seen.empty() && seen.back().value > 0) {
      d.tokensPerStep = seen.back().value / static_cast<double>(seen.back().step + 1);
    }
    for (const auto& m : kLayerMetrics) {
      auto& v = d.layers[m];
      auto fresh = store.layerSeries(info.id, m, v.steps.empty() ? INT64_MIN : v.steps.back() + 1);
      if (v.steps.empty()) {
        v = std::move(fresh);
      } else if (fresh.nLayers == v.nLayers) {
        v.steps.insert(v.steps.end(), fresh.steps.begin(), fresh.steps.end());
        v.values.insert(v.values.end(), fresh.values.begin(), fresh.values.end());
      }
    }
    const int64_t lastMatrix = d.angular.empty() ? INT64_MIN : d.angular.back().step;
    for (int64_t step : store.matrixSteps(info.id, metrics::kAngular)) {
      if (step <= lastMatrix) continue;
      if (auto m = store.matrix(info.id, metrics::kAngular, step)) d.angular.push_back(std::move(*m));
    }
    if (auto steps = store.matrixSteps(info.id, metrics::kBlockPrune); !steps.empty()) {
      d.blockPrune = store.matrix(info.id, metrics::kBlockPrune, steps.back());
      d.blockPruneError = store.matrix(info.id, metrics::kBlockPruneError, steps.back());
    }
    for (const auto& m : curveMetrics()) {
      if (auto lit = d.layers.find(m); lit != d.layers.end()) d.overview[m] = layerOverview(lit->second, kOverviewColumns);
    }
    if (info.status == store::RunStatus::Diverged) {
      for (const auto& e : store.events(info.id)) {
        if (e.level == store::EventLevel::Error && e.step) d.divergedAt = e.step;
      }
    }
    if (isNew) m_runs.push_back(std::move(d));
    else *it = std::move(d);
    any = true;
  }
  std::sort(m_runs.begin(), m_runs.end(),
            [](const RunData& a, const RunData& b) { return a.info.id < b.info.id; });
  return any;
}

std::vector<int64_t> GroupData::probeSteps() const {
  // A union of sorted lists, merged list by list (linear): asked at every refresh, and a
  // std::set of 2 runs x 5 metrics x 20,000 steps took ~15 ms of the GUI thread. Each series'
  // steps are ascending and distinct: loaded ORDER BY its primary key's step, and reload()
  // appends only steps after the last one held.
  std::vector<int64_t> steps, merged;
  for (const auto& r : m_runs) {
    for (const auto& [name, s] : r.layers) {
      if (name == "grad_norm") continue;  // every step: too fine for the scrubber
      merged.clear();
      std::set_union(steps.begin(), steps.end(), s.steps.begin(), s.steps.end(), std::back_inserter(merged));
      steps.swap(merged);
    }
  }
  return steps;
}

GroupProgressInfo GroupData::progress() const {
  GroupProgressInfo p;
  double eta = 0;
  bool measured = true;
  p.done = INT64_MAX;
  p.imported = !m_runs.empty();
  for (const auto& r : m_runs) p.total = std::max<int64_t>(p.total, r.totalSteps);
  for (const auto& r : m_runs) {
    p.imported = p.imported && r.imported;
    int64_t done = r.stepsDone();
    // A finished run is complete, also beside a run trained further than the group planned.
    if (r.info.status == store::RunStatus::Finished) done = std::max<int64_t>(done, p.total);
    p.done = std::min(p.done, done);
    if (store::isActive(r.info.status)) {
      p.running = true;
      const auto runEta = etaSeconds(r);
      if (runEta) eta = std::max(eta, *runEta);
      else measured = measured && r.stepsLeft() == 0;
    }
  }
  if (m_runs.empty()) p.done = 0;
  if (p.running && measured) p.etaSeconds = eta;
  return p;
}

std::optional<double> GroupData::etaSeconds(const RunData& run) const {
  if (run.info.status != store::RunStatus::Running) return std::nullopt;
  const int64_t left = run.stepsLeft();
  if (left == 0) return 0.0;
  double seconds = 0;
  for (const auto& r : m_runs) {
    const bool sameProcess = &r == &run || (r.info.status == store::RunStatus::Running &&
                                            r.info.pid == run.info.pid && r.info.pid != 0 &&
                                            r.info.host == run.info.host);
    if (!sameProcess) continue;
    const int64_t steps = std::min(left, r.stepsLeft());
    if (steps == 0) continue;
    if (!(r.secondsPerStep() > 0)) return std::nullopt;
    seconds += static_cast<double>(steps) * r.secondsPerStep();
  }
  return seconds;
}

int64_t GroupData::lastStep() const {
  int64_t last = 0;
  for (const auto& r : m_runs) {
    for (const auto& [k, v] : r.scalars) {
      if (!v.empty()) last = std::max(last, v.back().step);
    }
  }
  return last;
}

}  // namespace depthlab::ui

// See group_data.h.
#include "dashboard/group_data.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <iterator>

#include <QThread>

#include "experiment/run_cost.h"
#include "store/metric_catalogue.h"

namespace depthlab::ui {

// What the dashboard draws: what the one reader reads (run_series.h).
const std::vector<std::string> GroupData::kScalarKeys = runScalarKeys();
const std::vector<std::string> GroupData::kLayerMetrics = runLayerMetrics();

// The run line and its ETA are the dashboard's: defined here, so the figure export, which reads
// through run_series.cpp, does not link the run-cost and corpus code they format with.
QString RunData::statusLine(const QString& label, std::optional<double> etaSeconds) const {
  const QString name = label.isEmpty() ? QString::fromStdString(info.scheme) : label;
  if (imported) {
    auto it = layers.find(metrics::kVariance);
    const bool probed = it != layers.end() && !it->second.steps.empty();
    return probed ? QStringLiteral("%1 — imported model (not trained here) · probed · %2")
                        .arg(name, QString::fromStdString(info.device))
                  : QStringLiteral(
                        "%1 — imported model · not probed yet: depthlab-cli analyze --run %2 "
                        "--corpus TEXT")
                        .arg(name)
                        .arg(info.id);
  }
  QString state = QString::fromLatin1(store::toString(info.status));
  if (series) {
    auto probes = scalars.find(metrics::kLossProbe);
    auto tokens = scalars.find(metrics::kTokensSeen);
    const size_t n = probes == scalars.end() ? 0 : probes->second.size();
    const QString seen =
        tokens != scalars.end() && !tokens->second.empty()
            ? QStringLiteral(" · %1 tokens")
                  .arg(QString::fromStdString(experiment::formatCount(tokens->second.back().value)))
            : QString();
    return QStringLiteral(
               "%1 — checkpoint series (not trained here) · %2 checkpoint(s) probed, "
               "steps %3-%4%5 · %6 · %7")
        .arg(name)
        .arg(n)
        .arg(n ? probes->second.front().step : 0)
        .arg(n ? probes->second.back().step : 0)
        .arg(seen, QString::fromStdString(info.device), state);
  }
  if (divergedAt) state = QStringLiteral("diverged at step %1").arg(*divergedAt);
  const int64_t step = stepsDone();
  const double tps = recentTokensPerSecond();
  // Tokens seen of the budget: what an overnight run has read of what it will read.
  const QString tokens =
      tokensPerStep > 0
          ? QStringLiteral(" · %1 / %2 tokens")
                .arg(QString::fromStdString(
                         experiment::formatCount(static_cast<double>(step) * tokensPerStep)),
                     QString::fromStdString(experiment::formatCount(totalSteps * tokensPerStep)))
          : QString();
  return QStringLiteral("%1 — step %2/%3%4 · %5 tok/s · ETA %6 · %7 · %8")
      .arg(label.isEmpty() ? QString::fromStdString(info.scheme) : label)
      .arg(step)
      .arg(totalSteps > 0 ? totalSteps : step)
      .arg(tokens, tps > 0 ? QString::number(tps, 'f', 0) : QStringLiteral("-"),
           etaSeconds ? etaText(*etaSeconds) : QStringLiteral("-"),
           QString::fromStdString(info.device), state);
}

QString etaText(double seconds) {
  const int64_t secs = std::llround(std::max(0.0, seconds));
  if (secs < 3600)
    return QStringLiteral("%1:%2").arg(secs / 60).arg(secs % 60, 2, 10, QLatin1Char('0'));
  if (secs < 48 * 3600) {
    return QStringLiteral("%1:%2:%3")
        .arg(secs / 3600)
        .arg(secs / 60 % 60, 2, 10, QLatin1Char('0'))
        .arg(secs % 60, 2, 10, QLatin1Char('0'));
  }
  return QString::fromStdString(experiment::formatLongDuration(seconds));
}

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
    readRunSeries(store, info, d);
    if (isNew)
      m_runs.push_back(std::move(d));
    else
      *it = std::move(d);
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
      std::set_union(steps.begin(), steps.end(), s.steps.begin(), s.steps.end(),
                     std::back_inserter(merged));
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
  for (const auto& r : m_runs)  // a series or a log plans nothing: its steps so far are its course
    p.total =
        std::max<int64_t>(p.total, r.series || r.totalSteps == 0 ? r.stepsDone() : r.totalSteps);
  for (const auto& r : m_runs) {
    p.imported = p.imported && r.imported;
    int64_t done = r.stepsDone();
    // A finished run is complete, also beside a run trained further than the group planned.
    if (r.info.status == store::RunStatus::Finished) done = std::max<int64_t>(done, p.total);
    p.done = std::min(p.done, done);
    if (store::isActive(r.info.status)) {
      p.running = true;
      const auto runEta = etaSeconds(r);
      if (runEta)
        eta = std::max(eta, *runEta);
      else
        measured = measured && r.stepsLeft() == 0;
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
    const bool sameProcess =
        &r == &run || (r.info.status == store::RunStatus::Running && r.info.pid == run.info.pid &&
                       r.info.pid != 0 && r.info.host == run.info.host);
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

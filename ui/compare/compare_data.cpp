// See compare_data.h.
#include "compare/compare_data.h"

#include <algorithm>
#include <climits>

#include <QThread>

#include "analysis/layer_diagnosis.h"
#include "analysis/run_mismatch.h"
#include "compare/compare_profiles.h"
#include "dashboard/panel_specs.h"
#include "experiment/run_config.h"
#include "experiment/run_report.h"
#include "plot/run_labels.h"
#include "probes/lazy_layers.h"
#include "store/metric_catalogue.h"

namespace depthlab::ui::compare {

QString labelWithId(const std::map<int64_t, QString>& labels, int64_t runId) {
  const QString id = QStringLiteral("#%1").arg(runId);
  auto it = labels.find(runId);
  const QString label = it == labels.end() ? id : it->second;
  return label.endsWith(id) ? label : label + QStringLiteral(" (") + id + QLatin1Char(')');
}

namespace {

// Only the rows drawn (a run of 20,000 probed steps holds 20,000 rows of each metric): of the
// variance, the rows its heatmap's columns show (the difference map picks from them too); of
// the other profiles, the final row at or before `until`.
LoadedRun loadRun(store::RunStore& store, const store::RunInfo& info, int64_t until) {
  LoadedRun l;
  l.info = info;
  const int64_t id = info.id;
  l.lossTrain = store.scalarSeries(id, metrics::kLossTrain);
  l.lossVal = store.scalarSeries(id, metrics::kLossVal);
  // A checkpoint series has no validation split: its loss on the probe text at each checkpoint
  // (seedGroups says so beside the t-test).
  if (l.lossVal.empty() && experiment::isSeriesRun(info))
    l.lossVal = store.scalarSeries(id, metrics::kLossProbe);
  auto finalRow = [&](const std::string& metric, std::optional<int64_t> step) {
    return step ? store.layerSeries(id, metric, *step, *step) : store::LayerSeries{};
  };
  for (const auto& m : profiles()) {
    l.layers[m] = m == metrics::kVariance ? store.layerSeriesSampled(id, m, kHeatmapColumns)
                                          : finalRow(m, store.lastLayerStep(id, m, until));
  }
  // The pruning profile's error bars (standard errors over the probe sequences), from the step
  // of its final row.
  const auto& prune = l.layers[metrics::kPruneDelta];
  l.layers[dashboard::errorMetricOf(metrics::kPruneDelta)] =
      finalRow(dashboard::errorMetricOf(metrics::kPruneDelta),
               prune.steps.empty() ? std::nullopt : std::optional<int64_t>(prune.steps.back()));
  return l;
}

}  // namespace

std::shared_ptr<CompareData> loadCompareData(store::RunStore& store,
                                             const std::vector<int64_t>& runIds) {
  auto d = std::make_shared<CompareData>();
  d->requested = runIds;
  d->readOn = QThread::currentThreadId();
  // Runs planned for different lengths (one trained further): their final profiles and losses
  // at the fewest steps any was planned for, so they are compared at one point (imported
  // models at their own step).
  d->sharedStep = experiment::fewestPlannedSteps(store, runIds);
  std::vector<store::RunInfo> infos;
  for (int64_t id : runIds) {
    auto r = store.run(id);
    if (!r) continue;
    const int64_t until =
        d->sharedStep && !experiment::isImportedRun(*r) ? *d->sharedStep : INT64_MAX;
    d->runs.push_back(loadRun(store, *r, until));
    infos.push_back(*r);
  }
  const QStringList labels = runLabels(infos);
  for (size_t i = 0; i < infos.size(); ++i) d->labels[infos[i].id] = labels[static_cast<int>(i)];
  d->groups = analysis::seedGroups(store, infos, d->sharedStep);
  d->configDiff = analysis::configDiff(infos);
  d->mismatchText = QString::fromStdString(analysis::mismatchWarning(infos));
  for (const auto& m : analysis::runMismatches(infos))
    d->mismatchLabels << QString::fromStdString(m.label);
  for (const auto& r : infos) {  // each run's diagnosis at the step its finals are taken
    const auto until =
        d->sharedStep && !experiment::isImportedRun(r) ? d->sharedStep : std::nullopt;
    DiagnosisRun diag{
        r.id, labelWithId(d->labels, r.id), analysis::diagnoseLayers(store, r.id, until), {}};
    if (const auto c = experiment::tryConfigOf(r))
      diag.thresholds = probes::layerThresholds(c->probes);
    d->diagnoses.push_back(std::move(diag));
  }
  d->table = analysis::resultsTable(d->groups);
  // Snapshots only: checkpoint series have steps, losses and seeds to plot like trained runs.
  d->allImported =
      !infos.empty() && std::all_of(infos.begin(), infos.end(), experiment::isSnapshotRun);
  if (std::any_of(infos.begin(), infos.end(), experiment::isImportedRun)) {
    std::vector<int64_t> ids;
    for (const auto& r : infos) ids.push_back(r.id);
    d->families = experiment::makeFamilyTable(store, ids);
  }
  return d;
}

}  // namespace depthlab::ui::compare

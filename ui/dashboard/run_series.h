// RunData and its one reader: the series of one stored run (scalars, per-layer metrics, angular
// matrices by step, block pruning, config facts, curve overviews) as the dashboard and the
// paper-figure export both read them. readRunSeries fills a RunData incrementally (only rows
// after those it holds); it reads the store and nothing else, draws nothing and keeps no state.
// GroupData (group_data.h) reads a group's runs through it; figure_export.cpp reads a figure's.
// Compare and the family figures still read the store their own way. RunData::statusLine and
// etaText, the dashboard's run line, are defined in group_data.cpp (they link the run-cost code).
#pragma once

#include <QString>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "plot/series_adapter.h"
#include "probes/lazy_layers.h"
#include "store/run_store.h"

namespace depthlab::ui {

struct RunData {
  store::RunInfo info;
  int totalSteps = 0;  // from the config
  int nLayers = 0;
  bool imported = false;     // a Hugging Face model probed once, not trained
  bool series = false;       // a checkpoint series: probed at each checkpoint's step
  double tokensPerStep = 0;  // the config's slots; once it trains, its tokens_seen per update
  probes::LayerThresholds thresholds;  // its config's lazy / low E_l thresholds
  std::map<std::string, std::vector<store::ScalarPoint>> scalars;  // loss_train, loss_val, lr, ...
  std::map<std::string, store::LayerSeries> layers;  // variance, angular_adjacent, ...
  std::vector<store::Matrix> angular;                // (L x L) by step
  std::optional<store::Matrix> blockPrune;           // latest (L x L), if any
  std::optional<store::Matrix> blockPruneError;      // its standard errors, if stored
  std::optional<store::Matrix> skipEffect;           // latest (L x L) (s, l), if any
  /// eval --task --prune's latest matrices (2 x (N+1)) by key (task_acc_pruned, ...), and the
  /// task's chance level.
  std::map<std::string, store::Matrix> taskPruning;
  std::optional<double> taskChance;
  std::optional<int64_t> divergedAt;
  /// Per-layer metrics drawn as curves (panel_specs: LayerCurves), each layer min/max-decimated
  /// over the whole run (layerOverview), assembled by the loader with the series it read.
  std::map<std::string, std::vector<DecimatedSeries>> overview;
  /// "<label> — step 150/600 · 153.6k / 614.4k tokens · 6404 tok/s · ETA 1:20 · cpu · running"
  /// (label: the scheme; tokens: seen of the budget, steps x global batch x sequence;
  /// tok/s and etaSeconds (GroupData::etaSeconds of this run) "-" when unmeasured / not given).
  QString statusLine(const QString& label = QString(),
                     std::optional<double> etaSeconds = std::nullopt) const;
  /// The angular (l, n) matrix at the last step <= `step`, or nullptr.
  const store::Matrix* angularAt(int64_t step) const;
  /// Step -> x of the loss panels: "step" (itself), "tokens" (step x tokens per step) or
  /// "time" (training seconds, summed from the measured tokens/s; probes excluded).
  std::function<double(double)> axisMap(const QString& mode) const;
  /// Updates done (the last train-loss step + 1; 0 before the first).
  int64_t stepsDone() const;
  /// Mean tokens/s of the last few steps (0 when unmeasured).
  double recentTokensPerSecond() const;
  /// Seconds one of its steps takes at that rate (0 when unmeasured).
  double secondsPerStep() const;
  /// Steps still to train of the configured ones (0 when done).
  int64_t stepsLeft() const;
};

/// An ETA as the dashboard's run lines write it: "1:20" (m:ss), "5:02:10" (h:mm:ss) up to two
/// days, then "21.8 days".
QString etaText(double seconds);

/// The scalar keys and per-layer metrics the reader reads: those the metric catalogue flags for
/// the dashboard, plus tokens_seen (the run line's budget, the ETA) and the pruning deltas'
/// standard errors (the pruning bars' error bars). Every metric the paper figures draw is among
/// them.
const std::vector<std::string>& runScalarKeys();
const std::vector<std::string>& runLayerMetrics();

/// Reads `info`'s series into `into`: its config facts and status from `info`, then only the
/// rows after those `into` already holds (an empty RunData: every row). The angular matrices of
/// new steps, the latest block-pruning and skip-effect matrices, the curve overviews and, for a
/// diverged run, the step it diverged at.
void readRunSeries(store::RunStore& store, const store::RunInfo& info, RunData& into);

}  // namespace depthlab::ui

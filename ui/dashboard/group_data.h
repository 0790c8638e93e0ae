// GroupData: value snapshots of one run group, read from the run store for the dashboard, and
// the curve overviews assembled from them. No widgets, no QCustomPlot: the dashboard turns these
// into plots. Reloading reads only runs the store reports as changed. The store poller's loader
// thread reloads a copy and hands the GUI an immutable snapshot (dashboard/series_loader.h).
#pragma once

#include <QString>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/lazy_layers.h"
#include "plot/series_adapter.h"
#include "store/run_store.h"

namespace depthlab::ui {

struct RunData {
  store::RunInfo info;
  int totalSteps = 0;                                              // from the config
  int nLayers = 0;
  bool imported = false;                                           // a Hugging Face model, not trained
  double tokensPerStep = 0;  // the config's slots; once it trains, its tokens_seen per update
  analysis::LayerThresholds thresholds;  // its config's lazy / low E_l thresholds
  std::map<std::string, std::vector<store::ScalarPoint>> scalars;  // loss_train, loss_val, lr, ...
  std::map<std::string, store::LayerSeries> layers;                // variance, angular_adjacent, ...
  std::vector<store::Matrix> angular;                              // (L x L) by step
  std::optional<store::Matrix> blockPrune;                         // latest (L x L), if any
  std::optional<store::Matrix> blockPruneError;                    // its standard errors, if stored
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

/// The group's progress: steps done by its slowest active run, of the configured steps, and an
/// ETA from the runs' measured rates (GroupData::etaSeconds: the last active run to finish).
struct GroupProgressInfo {
  int64_t done = 0, total = 0;
  std::optional<double> etaSeconds;  // while running with a measured rate
  bool running = false;
  bool imported = false;             // every run is an imported model (nothing to train)
};

class GroupData {
 public:
  explicit GroupData(QString group) : m_group(std::move(group)) {}
  const QString& group() const { return m_group; }
  /// Reloads runs of this group that are new or listed in `changed` (all when empty).
  /// Returns true when something was reloaded.
  bool reload(store::RunStore& store, const std::vector<int64_t>& changed);
  /// The thread whose reload() last read the store (tests: the poller's loader is not the GUI).
  Qt::HANDLE loadedOn() const { return m_loadedOn; }
  const std::vector<RunData>& runs() const { return m_runs; }
  /// Every step at which any per-layer metric exists, sorted (the scrubber's stops).
  std::vector<int64_t> probeSteps() const;
  int64_t lastStep() const;
  GroupProgressInfo progress() const;
  /// Seconds until `run` has trained its configured steps, from the runs' measured rates;
  /// nullopt when it is not running or a rate it depends on is unmeasured. A paired group's
  /// process trains its runs in lockstep, one step of each in turn: while this run takes its
  /// remaining steps, every active run of the same process (host and pid) takes as many of its
  /// own, or all it has left, so their step times add up. Runs trained by other processes
  /// (resumed or trained further one by one) go on beside it and do not count.
  std::optional<double> etaSeconds(const RunData& run) const;

  static const std::vector<std::string> kScalarKeys;
  static const std::vector<std::string> kLayerMetrics;

 private:
  QString m_group;
  std::vector<RunData> m_runs;
  Qt::HANDLE m_loadedOn = nullptr;
};

}  // namespace depthlab::ui

// GroupData: value snapshots of one run group, read from the run store for the dashboard.
// No widgets, no QCustomPlot: the dashboard turns these into plots. Reloading reads only
// runs the store reports as changed.
#pragma once

#include <QString>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/run_store.h"

namespace depthlab::ui {

struct RunData {
  store::RunInfo info;
  int totalSteps = 0;                                              // from the config
  int nLayers = 0;
  bool imported = false;                                           // a Hugging Face model, not trained
  double tokensPerStep = 0;                                        // from the config
  std::map<std::string, std::vector<store::ScalarPoint>> scalars;  // loss_train, loss_val, lr, ...
  std::map<std::string, store::LayerSeries> layers;                // variance, angular_adjacent, ...
  std::vector<store::Matrix> angular;                              // (L x L) by step
  std::optional<store::Matrix> blockPrune;                         // latest (L x L), if any
  std::optional<store::Matrix> blockPruneError;                    // its standard errors, if stored
  std::optional<int64_t> divergedAt;
  /// "<label> — step 150/600 · 6404 tok/s · ETA 1:20 · cpu · running" (label: the scheme).
  QString statusLine(const QString& label = QString()) const;
  /// The angular (l, n) matrix at the last step <= `step`, or nullptr.
  const store::Matrix* angularAt(int64_t step) const;
  /// Step -> x of the loss panels: "step" (itself), "tokens" (step x tokens per step) or
  /// "time" (training seconds, summed from the measured tokens/s; probes excluded).
  std::function<double(double)> axisMap(const QString& mode) const;
  /// Updates done (the last train-loss step + 1; 0 before the first).
  int64_t stepsDone() const;
  /// Mean tokens/s of the last few steps (0 when unmeasured).
  double recentTokensPerSecond() const;
};

/// The group's progress: steps done by its slowest active run, of the configured steps, and an
/// ETA from the runs' measured rates (a paired group trains its runs in turn, so their step
/// times add up).
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
  const std::vector<RunData>& runs() const { return m_runs; }
  /// Every step at which any per-layer metric exists, sorted (the scrubber's stops).
  std::vector<int64_t> probeSteps() const;
  int64_t lastStep() const;
  GroupProgressInfo progress() const;

  static const std::vector<std::string> kScalarKeys;
  static const std::vector<std::string> kLayerMetrics;

 private:
  QString m_group;
  std::vector<RunData> m_runs;
};

}  // namespace depthlab::ui

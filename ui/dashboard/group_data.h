// GroupData: value snapshots of one run group, read from the run store for the dashboard.
// No widgets, no QCustomPlot: the dashboard turns these into plots. Reloading reads only
// runs the store reports as changed.
#pragma once

#include <QString>

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
  std::map<std::string, std::vector<store::ScalarPoint>> scalars;  // loss_train, loss_val, lr, ...
  std::map<std::string, store::LayerSeries> layers;                // variance, angular_adjacent, ...
  std::vector<store::Matrix> angular;                              // (L x L) by step
  std::optional<store::Matrix> blockPrune;                         // latest (L x L), if any
  std::optional<int64_t> divergedAt;
  QString statusLine() const;
  /// The angular (l, n) matrix at the last step <= `step`, or nullptr.
  const store::Matrix* angularAt(int64_t step) const;
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

  static const std::vector<std::string> kScalarKeys;
  static const std::vector<std::string> kLayerMetrics;

 private:
  QString m_group;
  std::vector<RunData> m_runs;
};

}  // namespace depthlab::ui

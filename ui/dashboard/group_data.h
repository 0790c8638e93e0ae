// GroupData: value snapshots of one run group, read from the run store for the dashboard
// through the one reader of a run's series (run_series.h: RunData, readRunSeries). No widgets,
// no QCustomPlot: the dashboard turns these into plots. Reloading reads only runs the store
// reports as changed. The store poller's loader thread reloads a copy and hands the GUI an
// immutable snapshot (dashboard/series_loader.h).
#pragma once

#include <QString>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dashboard/run_series.h"
#include "store/run_store.h"

namespace depthlab::ui {

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

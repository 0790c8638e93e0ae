// The loader of run series behind the dashboard (Compare and the figure export still read the
// store themselves; Compare on the GUI thread): a group's runs reloaded from the store (GroupData::reload: the SQL reads, the per-run scalar, per-layer
// and matrix series and the curve overviews) onto a copy of the last snapshot, handed on as an
// immutable snapshot. SeriesLoader runs it on the store poller's loader thread with its own
// read-only connection and delivers the snapshot to the GUI thread by a queued call, so the GUI
// thread only draws. Draws nothing, touches no widget.
#pragma once

#include <QObject>
#include <QString>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dashboard/group_data.h"

namespace depthlab::ui {

/// An immutable snapshot of one group's series: shared by the loader and every view.
using GroupSnapshot = std::shared_ptr<const GroupData>;

/// Whether reloading `changed` (empty: every run) would read any run of `group`: one of its
/// runs is new to `base` or listed (`runs`: the store's runs now).
bool groupTouched(const GroupData& base, const std::vector<store::RunInfo>& runs,
                  const std::vector<int64_t>& changed);

/// The one load: `base` (null: an empty group) with its new runs and those in `changed` read
/// from `store`, as a new snapshot; `base` itself when none of its runs changed.
GroupSnapshot loadGroup(store::RunStore& store, const QString& group, const GroupSnapshot& base,
                        const std::vector<int64_t>& changed);

/// Runs loadGroup on the thread it lives on (the poller's loader thread), with its own
/// read-only connection to the database at `dbPath`, opened there on first use.
class SeriesLoader : public QObject {
 public:
  /// `relay`: an object on the receivers' thread that outlives this loader's thread (the poller).
  SeriesLoader(std::string dbPath, QObject* relay) : m_path(std::move(dbPath)), m_relay(relay) {}
  using Done = std::function<void(GroupSnapshot)>;
  using Failed = std::function<void(QString)>;
  /// Queues a load; `done` (or `failed`, with the store's message) then runs on `receiver`'s
  /// thread, and not at all when `receiver` is gone by then. Callable from any thread.
  void load(const QString& group, GroupSnapshot base, std::vector<int64_t> changed, QObject* receiver,
            Done done, Failed failed);

 private:
  std::string m_path;
  QObject* m_relay = nullptr;
  std::optional<store::RunStore> m_store;  // used on the loader thread only
};

}  // namespace depthlab::ui

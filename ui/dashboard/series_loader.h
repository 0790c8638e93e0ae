// The loader of run series behind the window's views: a dashboard's group reloaded from the
// store (GroupData::reload: the SQL reads, the per-run scalar, per-layer and matrix series and
// the curve overviews) onto a copy of the last snapshot, handed on as an immutable snapshot; and
// any other read a view asks for (Compare's runs: compare/compare_data.h). SeriesLoader runs
// them on the store poller's loader thread with its own read-only connection and delivers the
// result to the GUI thread by a queued call, so the GUI thread only draws. Draws nothing,
// touches no widget.
#pragma once

#include <QMetaObject>
#include <QObject>
#include <QPointer>
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
  /// Queues `work` (a read of the store through the loader's connection); `done` then gets its
  /// result (`failed` the store's message) on `receiver`'s thread, and not at all when
  /// `receiver` is gone by then. T is copied across threads: a shared pointer, say.
  template <class T>
  void read(std::function<T(store::RunStore&)> work, QObject* receiver, std::function<void(T)> done,
            Failed failed) {
    QPointer<QObject> to(receiver);
    QObject* relay = m_relay ? m_relay : receiver;
    post([work = std::move(work), done = std::move(done), to, relay](store::RunStore& store) {
      T result = work(store);
      QMetaObject::invokeMethod(relay, [to, done, result] { if (to) done(result); }, Qt::QueuedConnection);
    }, relay, to, std::move(failed));
  }

 private:
  // Runs `work` on the loader thread, opening the connection on first use; a failure goes to
  // `failed` through `relay`, unless `to` has gone.
  void post(std::function<void(store::RunStore&)> work, QObject* relay, QPointer<QObject> to, Failed failed);

  std::string m_path;
  QObject* m_relay = nullptr;
  std::optional<store::RunStore> m_store;  // used on the loader thread only
};

}  // namespace depthlab::ui

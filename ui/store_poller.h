// StorePoller: follows the run store by polling its change counter (a single indexed read) and
// says which runs changed; it owns the loader thread on which every view's run series are read
// and assembled (SeriesLoader, with its own read-only connection), so the GUI thread receives
// ready, immutable snapshots and only draws. It never writes metrics and never blocks on a
// training process: the database is the bus.
#pragma once

#include <QObject>
#include <QThread>
#include <QTimer>

#include <memory>
#include <vector>

#include "dashboard/series_loader.h"
#include "store/run_store.h"

namespace depthlab::ui {

class StorePoller : public QObject {
  Q_OBJECT
 public:
  /// Takes ownership of an open store; polls every `intervalMs`.
  StorePoller(store::RunStore store, int intervalMs = 200, QObject* parent = nullptr);
  ~StorePoller() override;
  store::RunStore& store() { return m_store; }
  /// Polls now (also called by the timer).
  void poll();
  /// The poller whose store() `store` is, or nullptr (a store opened elsewhere: a test, a CLI).
  static StorePoller* owning(const store::RunStore& store);
  /// Loads `group`'s new and changed runs onto `base` on the loader thread (loadGroup); `done`
  /// runs on the GUI thread with the snapshot (null when the load failed: storeError says why),
  /// unless `receiver` has gone. Returns false when
  /// this store has no file another connection can read (in memory): load here instead.
  bool loadAsync(const QString& group, GroupSnapshot base, std::vector<int64_t> changed,
                 QObject* receiver, SeriesLoader::Done done);
  /// Runs `work` on the loader thread (SeriesLoader::read): `done` gets its result on the GUI
  /// thread, or `failed` the store's message (and storeError is emitted), unless `receiver`
  /// has gone. Returns false when this store has no file another connection can read: read
  /// here instead.
  template <class T>
  bool readAsync(std::function<T(store::RunStore&)> work, QObject* receiver, std::function<void(T)> done,
                 SeriesLoader::Failed failed) {
    if (!m_loader) return false;
    m_loader->read<T>(std::move(work), receiver, std::move(done), [this, failed](const QString& message) {
      Q_EMIT storeError(message);
      failed(message);
    });
    return true;
  }

 Q_SIGNALS:
  /// Runs whose rows or metrics changed since the last poll (first poll: every run).
  void runsChanged(const std::vector<int64_t>& runIds);
  void storeError(const QString& message);

 private:
  store::RunStore m_store;
  QTimer m_timer;
  int64_t m_seen = -1;
  int m_pollsSinceReap = 0;
  QThread m_loaderThread;
  SeriesLoader* m_loader = nullptr;  // lives on m_loaderThread
};

}  // namespace depthlab::ui

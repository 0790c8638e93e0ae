// StorePoller: follows the run store from the GUI thread by polling its change counter (a
// single indexed read) and says which runs changed. It never writes metrics and never blocks
// on a training process: the database is the bus.
#pragma once

#include <QObject>
#include <QTimer>

#include <memory>
#include <vector>

#include "store/run_store.h"

namespace depthlab::ui {

class StorePoller : public QObject {
  Q_OBJECT
 public:
  /// Takes ownership of an open store; polls every `intervalMs`.
  StorePoller(store::RunStore store, int intervalMs = 200, QObject* parent = nullptr);
  store::RunStore& store() { return m_store; }
  /// Polls now (also called by the timer).
  void poll();

 Q_SIGNALS:
  /// Runs whose rows or metrics changed since the last poll (first poll: every run).
  void runsChanged(const std::vector<int64_t>& runIds);
  void storeError(const QString& message);

 private:
  store::RunStore m_store;
  QTimer m_timer;
  int64_t m_seen = -1;
  int m_pollsSinceReap = 0;
};

}  // namespace depthlab::ui

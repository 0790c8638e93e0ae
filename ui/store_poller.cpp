// StorePoller; see store_poller.h.
#include "store_poller.h"

namespace depthlab::ui {

StorePoller::StorePoller(store::RunStore store, int intervalMs, QObject* parent)
    : QObject(parent), m_store(std::move(store)) {
  m_timer.setInterval(intervalMs);
  connect(&m_timer, &QTimer::timeout, this, &StorePoller::poll);
  m_timer.start();
}

void StorePoller::poll() {
  try {
    // Every ~5 s, mark runs whose process has died as crashed.
    if (++m_pollsSinceReap >= 25 || m_seen < 0) {
      m_pollsSinceReap = 0;
      m_store.reapCrashedRuns();
    }
    const int64_t counter = m_store.changeCounter();
    if (counter == m_seen) return;
    auto changed = m_store.runsChangedSince(m_seen < 0 ? -1 : m_seen);
    m_seen = counter;
    Q_EMIT runsChanged(changed);
  } catch (const std::exception& e) {
    Q_EMIT storeError(QString::fromStdString(e.what()));
  }
}

}  // namespace depthlab::ui

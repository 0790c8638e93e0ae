// StorePoller; see store_poller.h.
#include "store_poller.h"

#include <map>

namespace depthlab::ui {

namespace {

// The window's pollers by their store (GUI thread only).
std::map<const store::RunStore*, StorePoller*>& pollers() {
  static std::map<const store::RunStore*, StorePoller*> byStore;
  return byStore;
}

}  // namespace

StorePoller::StorePoller(store::RunStore store, int intervalMs, QObject* parent)
    : QObject(parent), m_store(std::move(store)) {
  m_timer.setInterval(intervalMs);
  connect(&m_timer, &QTimer::timeout, this, &StorePoller::poll);
  m_timer.start();
  pollers()[&m_store] = this;
  const bool inMemory = m_store.path().empty() || m_store.path() == ":memory:";
  if (!inMemory) {
    m_loaderThread.setObjectName(QStringLiteral("depthlab-series-loader"));
    m_loader = new SeriesLoader(m_store.path(), this);
    m_loader->moveToThread(&m_loaderThread);
    m_loaderThread.start(QThread::LowPriority);
  }
}

StorePoller::~StorePoller() {
  pollers().erase(&m_store);
  m_loaderThread.quit();
  m_loaderThread.wait();
  delete m_loader;  // its thread has finished: nothing of it runs any more
}

StorePoller* StorePoller::owning(const store::RunStore& store) {
  auto it = pollers().find(&store);
  return it == pollers().end() ? nullptr : it->second;
}

bool StorePoller::loadAsync(const QString& group, GroupSnapshot base, std::vector<int64_t> changed,
                            QObject* receiver, SeriesLoader::Done done) {
  if (!m_loader) return false;
  // A failed load says so and answers with no snapshot: the view keeps what it shows and
  // loads again at the next change.
  m_loader->load(group, std::move(base), std::move(changed), receiver, done, [this, done](const QString& message) {
    Q_EMIT storeError(message);
    done(nullptr);
  });
  return true;
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

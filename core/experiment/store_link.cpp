// See store_link.h.
#include "experiment/store_link.h"

#include <algorithm>

namespace depthlab::experiment {

StoreLink::StoreLink(store::RunStore& store, size_t maxQueuedValues)
    : m_store(store), m_maxValues(maxQueuedValues) {}

void StoreLink::enqueue(Op op) {
  m_queuedValues += op.values;
  m_queue.push_back(std::move(op));
  // Over the bound: drop the oldest metric batches (never checkpoints or status changes).
  for (auto it = m_queue.begin(); m_queuedValues > m_maxValues && it != m_queue.end();) {
    if (it->values == 0) { ++it; continue; }
    m_queuedValues -= it->values;
    m_droppedValues += it->values;
    it = m_queue.erase(it);
  }
  flush();
}

void StoreLink::write(int64_t runId, store::WriteBatch batch) {
  if (batch.empty()) return;
  const size_t n = std::max<size_t>(1, batch.valueCount());
  enqueue({runId, [runId, b = std::move(batch)](store::RunStore& s) { s.write(runId, b); }, n});
}

void StoreLink::addCheckpoint(int64_t runId, const store::CheckpointInfo& c) {
  enqueue({runId, [this, runId, c](store::RunStore& s) {
              s.addCheckpoint(runId, c);
              m_recorded[runId] = c.step;
            }, 0});
}

void StoreLink::removeCheckpoint(int64_t runId, int64_t step) {
  enqueue({runId, [runId, step](store::RunStore& s) { s.removeCheckpoint(runId, step); }, 0});
}

void StoreLink::finishRun(int64_t runId, store::RunStatus status) {
  enqueue({runId, [runId, status](store::RunStore& s) { s.finishRun(runId, status); }, 0});
}

void StoreLink::heartbeat(int64_t runId) {
  if (!m_queue.empty()) return;
  enqueue({runId, [runId](store::RunStore& s) { s.heartbeat(runId); }, 0});
}

bool StoreLink::flush(bool force) {
  if (m_queue.empty()) return true;
  const auto now = Clock::now();
  if (!force && m_failingSince && now < m_nextTry) return false;
  try {
    while (!m_queue.empty()) {
      m_queue.front().apply(m_store);
      m_queuedValues -= m_queue.front().values;
      m_queue.pop_front();
    }
  } catch (const std::exception& e) {
    m_lastError = e.what();
    for (const auto& op : m_queue) m_affected.insert(op.runId);
    if (!m_failingSince) {
      m_failingSince = now;
      if (onNotice) onNotice("the run store refused a write (" + m_lastError +
                             "); metrics wait in memory and are retried");
    }
    m_nextTry = now + std::chrono::duration_cast<Clock::duration>(
                          std::chrono::duration<double>(m_backoff));
    m_backoff = std::min(m_backoff * 2, 30.0);
    return false;
  }
  if (m_failingSince) {  // recovered: say so in every run that waited
    const double seconds = std::chrono::duration<double>(now - *m_failingSince).count();
    std::string msg = "the run store was unwritable for " + std::to_string(static_cast<int>(seconds)) +
                      " s (" + m_lastError + "); the queued metrics were written";
    if (m_droppedValues > 0) {
      msg += ", except " + std::to_string(m_droppedValues) + " values dropped over the memory bound";
    }
    m_failingSince.reset();
    m_backoff = 0.5;
    m_droppedValues = 0;
    if (onNotice) onNotice(msg);
    for (int64_t runId : m_affected) {
      store::WriteBatch b;
      b.event(std::nullopt, store::EventLevel::Warning, msg);
      try {
        m_store.write(runId, b);
      } catch (const std::exception&) {
        // the store failed again at once: the next flush retries the metrics, not this note
      }
    }
    m_affected.clear();
  }
  return true;
}

double StoreLink::unwritableSeconds() const {
  if (!m_failingSince) return 0;
  return std::chrono::duration<double>(Clock::now() - *m_failingSince).count();
}

bool StoreLink::stopRequested(int64_t runId) {
  try {
    return m_store.stopRequested(runId);
  } catch (const std::exception&) {
    return false;
  }
}

std::optional<int64_t> StoreLink::recordedCheckpoint(int64_t runId) const {
  auto it = m_recorded.find(runId);
  if (it == m_recorded.end()) return std::nullopt;
  return it->second;
}

void StoreLink::noteRecorded(int64_t runId, int64_t step) { m_recorded[runId] = step; }

}  // namespace depthlab::experiment

// StoreLink: how the run loop writes to the run store so that training outlives the store.
// Every write (metric batches, checkpoint rows, status changes) is queued and applied in order;
// when the store fails (a lock held by another program past the busy timeout, a full disk, a
// read-only file) the queue stays in memory, bounded, and is retried with back-off, and a
// warning event says so once the store takes writes again. The caller asks unwritableSeconds()
// to decide when to give up (checkpoint and stop). Metric batches are dropped oldest first only
// past the bound, and a warning event counts them. Not thread-safe: the run loop's thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "store/run_store.h"

namespace depthlab::experiment {

class StoreLink {
 public:
  /// `maxQueuedValues`: metric values kept in memory while the store fails.
  explicit StoreLink(store::RunStore& store, size_t maxQueuedValues = 4'000'000);

  void write(int64_t runId, store::WriteBatch batch);
  void addCheckpoint(int64_t runId, const store::CheckpointInfo& c);
  void removeCheckpoint(int64_t runId, int64_t step);
  void finishRun(int64_t runId, store::RunStatus status);
  /// "This run's process is alive" (what other hosts judge liveness by); skipped while writes
  /// are waiting, since they say nothing when they land late.
  void heartbeat(int64_t runId);

  /// Applies what is queued, unless a retry is not due yet (`force` ignores the back-off).
  /// Returns true when the queue is empty afterwards.
  bool flush(bool force = false);
  /// Seconds since the store last refused a write while the queue is not empty; 0 when fine.
  double unwritableSeconds() const;
  bool idle() const { return m_queue.empty(); }
  /// The store's last error ("" when none), for messages.
  const std::string& lastError() const { return m_lastError; }
  /// Reads that may fail too: a failing poll counts as "no stop requested".
  bool stopRequested(int64_t runId);
  /// The newest step whose checkpoint row the store took (addCheckpoint applied, or told with
  /// noteRecorded): the file pruning must keep while newer rows wait.
  std::optional<int64_t> recordedCheckpoint(int64_t runId) const;
  void noteRecorded(int64_t runId, int64_t step);
  /// Called with a line for the user when the store starts or stops failing.
  std::function<void(const std::string&)> onNotice;

 private:
  using Clock = std::chrono::steady_clock;
  struct Op {
    int64_t runId = 0;
    std::function<void(store::RunStore&)> apply;
    size_t values = 0;  // metric values (0 for non-metric operations, which are never dropped)
  };
  void enqueue(Op op);

  store::RunStore& m_store;
  size_t m_maxValues;
  std::deque<Op> m_queue;
  size_t m_queuedValues = 0;
  size_t m_droppedValues = 0;
  std::optional<Clock::time_point> m_failingSince;
  Clock::time_point m_nextTry{};
  double m_backoff = 0.5;
  std::string m_lastError;
  std::set<int64_t> m_affected;  // runs whose writes waited, told once the store recovers
  std::map<int64_t, int64_t> m_recorded;  // run -> step of its newest checkpoint row written
};

}  // namespace depthlab::experiment

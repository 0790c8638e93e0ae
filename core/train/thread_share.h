// Coarse-grained parallelism for many small, independent pieces of torch work (pruned
// evaluations, probes beside training): each piece runs on its own thread with one intra-op
// thread, instead of every op being split across ATen's threads. On this project's small
// models that is close to linear in threads where per-op splitting gains little (and stalls
// when a virtual CPU is descheduled at a barrier). Does not choose how many threads to use.
#pragma once

#include <functional>

namespace depthlab::train {

/// The calling thread's intra-op thread count, settled: ATen's process-wide default (which a
/// thread adopts lazily at its first parallel op) can no longer replace it.
int settledThreadCount();

/// Gives the calling thread (a worker of its own) one intra-op thread for good: set after the
/// thread's lazy adoption of ATen's process-wide default, so no later setting elsewhere changes it.
void useOneIntraOpThread();

/// The cores this process may run on (at least 1).
int cpuCores();

/// Runs body(worker) for worker = 0..workers-1 side by side; the calling thread is worker 0.
/// With more than one worker, each has one intra-op thread and the caller's grad mode; the caller's intra-op
/// thread count is restored afterwards. The first exception thrown by any worker is rethrown
/// once all have finished. One worker: body(0) on the caller, nothing changed.
void runSideBySide(int workers, const std::function<void(int worker)>& body);

/// Gives the calling thread `threads` intra-op threads for the scope and then its previous
/// count back. ATen keeps one process-wide default that threads not yet initialised adopt;
/// the caller's own count is settled first so another thread's setting cannot become it.
class IntraOpThreads {
 public:
  explicit IntraOpThreads(int threads);
  ~IntraOpThreads();
  IntraOpThreads(const IntraOpThreads&) = delete;
  IntraOpThreads& operator=(const IntraOpThreads&) = delete;

 private:
  int m_previous;
};

}  // namespace depthlab::train

// A fixed team of threads that run one body side by side, call after call: the training step
// hands every update's forward and backward passes to the same threads (train/row_split.h),
// so no thread is started per update, each worker keeps its own malloc arena and caches warm,
// and its one intra-op thread is set once. A kept team lets the caller wait (Caller::Waits)
// rather than run worker 0 itself: LibTorch 1.13's set_num_threads rebuilds its pthreadpool on
// every call, and the new pool's thread spins ~18 ms of CPU, so giving the caller one thread
// per run and its count back cost a spinning thread on another core every run.
// runSideBySide (thread_share.h) is a team made for one call, for work that comes now and then.
//
// Does not: choose the team's size, or split work (the body does, by its worker index).
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace depthlab::train {

class WorkerTeam {
 public:
  /// Who runs worker 0 of every run: the calling thread (its intra-op thread count is set to
  /// one for the run and back after), or a thread of the team while the caller waits.
  enum class Caller { Works, Waits };
  /// Starts the team's threads (workers - 1, or workers when the caller waits), each with one
  /// intra-op thread. The caller's intra-op thread count is as it was when this returns.
  explicit WorkerTeam(int workers, Caller caller = Caller::Works);
  /// Stops and joins the threads (after the run in progress, if any, which must have returned).
  ~WorkerTeam();
  WorkerTeam(const WorkerTeam&) = delete;
  WorkerTeam& operator=(const WorkerTeam&) = delete;

  int size() const { return static_cast<int>(m_threads.size()) + (m_caller == Caller::Works ? 1 : 0); }
  /// Runs body(w) for w = 0..size()-1 side by side, each with one intra-op thread and the
  /// caller's grad mode (Caller::Works: the caller runs worker 0 and gets its count back), and returns
  /// when all have finished; then rethrows the first exception any of them threw. Not reentrant.
  void run(const std::function<void(int worker)>& body);

 private:
  void workerLoop(int worker);

  Caller m_caller = Caller::Works;
  std::vector<std::thread> m_threads;
  std::mutex m_mutex;
  std::condition_variable m_wake, m_done;
  const std::function<void(int)>* m_body = nullptr;  // the run in progress
  long m_generation = 0;                             // runs started
  int m_pending = 0;                                 // workers of this run still busy
  int m_settled = 0;                                 // workers that set their thread count
  bool m_grad = true;                                // the caller's grad mode for this run
  bool m_stop = false;
  std::exception_ptr m_failure;
};

}  // namespace depthlab::train

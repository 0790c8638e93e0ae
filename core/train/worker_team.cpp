// See worker_team.h.
#include "train/worker_team.h"

#include <torch/torch.h>

#include "train/thread_share.h"

namespace depthlab::train {

WorkerTeam::WorkerTeam(int workers, Caller caller)
    : m_caller(workers > 1 ? caller : Caller::Works) {
  const int callerThreads = settledThreadCount();
  const int first = m_caller == Caller::Waits ? 0 : 1;
  for (int w = first; w < workers; ++w) m_threads.emplace_back([this, w] { workerLoop(w); });
  std::unique_lock<std::mutex> lock(m_mutex);
  m_done.wait(lock, [&] { return m_settled == static_cast<int>(m_threads.size()); });
  // A worker's set_num_threads also sets ATen's process-wide default: the caller's comes back.
  torch::set_num_threads(callerThreads);
}

WorkerTeam::~WorkerTeam() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stop = true;
  }
  m_wake.notify_all();
  for (auto& t : m_threads) t.join();
}

void WorkerTeam::workerLoop(int worker) {
  useOneIntraOpThread();
  long seen = 0;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    ++m_settled;
  }
  m_done.notify_all();
  for (;;) {
    const std::function<void(int)>* body = nullptr;
    bool grad = true;
    {
      std::unique_lock<std::mutex> lock(m_mutex);
      m_wake.wait(lock, [&] { return m_stop || m_generation != seen; });
      if (m_stop) return;
      seen = m_generation;
      body = m_body;
      grad = m_grad;
    }
    std::exception_ptr failure;
    try {
      torch::AutoGradMode mode(grad);  // grad mode is per thread
      (*body)(worker);
    } catch (...) {
      failure = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      if (failure && !m_failure) m_failure = failure;
      --m_pending;
    }
    m_done.notify_all();
  }
}

void WorkerTeam::run(const std::function<void(int worker)>& body) {
  if (m_threads.empty()) {
    body(0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_body = &body;
    m_grad = torch::GradMode::is_enabled();
    m_pending = static_cast<int>(m_threads.size());
    m_failure = nullptr;
    ++m_generation;
  }
  m_wake.notify_all();
  std::exception_ptr failure;
  if (m_caller == Caller::Works) {
    try {
      IntraOpThreads single(1);
      body(0);
    } catch (...) {
      failure = std::current_exception();
    }
  }
  std::unique_lock<std::mutex> lock(m_mutex);
  m_done.wait(lock, [&] { return m_pending == 0; });
  m_body = nullptr;
  if (!failure) failure = m_failure;
  lock.unlock();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace depthlab::train

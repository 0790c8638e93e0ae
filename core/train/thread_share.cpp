// See thread_share.h.
#include "train/thread_share.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace depthlab::train {

// A thread adopts ATen's process-wide default count at its first parallel op (lazily, once per
// thread; the flag lives in an inline function, so libtorch and this binary may each keep one).
// Settling both first makes a count set afterwards stick, whatever other threads set later.
int settledThreadCount() {
  at::internal::lazy_init_num_threads();
  return torch::get_num_threads();
}

void useOneIntraOpThread() {
  settledThreadCount();
  torch::set_num_threads(1);
}

int cpuCores() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

IntraOpThreads::IntraOpThreads(int threads) : m_previous(settledThreadCount()) {
  if (threads != m_previous) torch::set_num_threads(threads);
}

IntraOpThreads::~IntraOpThreads() {
  if (torch::get_num_threads() != m_previous) torch::set_num_threads(m_previous);
}

void runSideBySide(int workers, const std::function<void(int worker)>& body) {
  if (workers <= 1) {
    body(0);
    return;
  }
  const int callerThreads = settledThreadCount();
  const bool grad = torch::GradMode::is_enabled();
  std::mutex mutex;
  std::exception_ptr failure;
  auto run = [&](int worker) {
    try {
      torch::AutoGradMode mode(grad);  // grad mode is per thread
      body(worker);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  std::vector<std::thread> others;
  for (int w = 1; w < workers; ++w) {
    others.emplace_back([&, w] {
      useOneIntraOpThread();
      run(w);
    });
  }
  {
    IntraOpThreads single(1);
    run(0);
  }
  for (auto& t : others) t.join();
  // The workers' set_num_threads also set ATen's process-wide default: put the caller's back.
  torch::set_num_threads(callerThreads);
  if (failure) std::rethrow_exception(failure);
}

}  // namespace depthlab::train

// See thread_share.h.
#include "train/thread_share.h"

#include "train/worker_team.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <thread>

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
  WorkerTeam team(workers);  // threads started for this call only
  team.run(body);
}

}  // namespace depthlab::train

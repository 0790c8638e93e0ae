// runSideBySide and IntraOpThreads: every worker runs once with one intra-op thread and the
// caller's grad mode, failures come back to the caller, and thread counts are restored.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <atomic>
#include <set>
#include <stdexcept>
#include <thread>

#include "train/thread_share.h"

using namespace depthlab;

TEST(ThreadShare, EveryWorkerRunsOnceOnItsOwnThreadWithOneIntraOpThread) {
  train::IntraOpThreads two(2);
  std::mutex mutex;
  std::set<int> workers;
  std::set<std::thread::id> threads;
  std::atomic<int> single{0}, noGrad{0};
  torch::NoGradGuard ng;
  train::runSideBySide(4, [&](int w) {
    if (torch::get_num_threads() == 1) ++single;
    if (!torch::GradMode::is_enabled()) ++noGrad;
    std::lock_guard<std::mutex> lock(mutex);
    workers.insert(w);
    threads.insert(std::this_thread::get_id());
  });
  EXPECT_EQ(workers, (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(threads.size(), 4u);
  EXPECT_TRUE(threads.count(std::this_thread::get_id()));  // the caller is worker 0
  EXPECT_EQ(single.load(), 4);
  EXPECT_EQ(noGrad.load(), 4);
  EXPECT_EQ(torch::get_num_threads(), 2);
}

TEST(ThreadShare, AWorkersFailureReachesTheCallerAfterAllFinished) {
  std::atomic<int> finished{0};
  EXPECT_THROW(train::runSideBySide(3, [&](int w) {
                 if (w == 2) throw std::runtime_error("worker 2 failed");
                 ++finished;
               }),
               std::runtime_error);
  EXPECT_EQ(finished.load(), 2);
}

TEST(ThreadShare, OneWorkerIsTheCallerUntouched) {
  train::IntraOpThreads two(2);
  int threads = 0;
  train::runSideBySide(1, [&](int) { threads = torch::get_num_threads(); });
  EXPECT_EQ(threads, 2);
}

TEST(ThreadShare, IntraOpThreadsRestoresTheCount) {
  const int before = torch::get_num_threads();
  {
    train::IntraOpThreads three(3);
    EXPECT_EQ(torch::get_num_threads(), 3);
  }
  EXPECT_EQ(torch::get_num_threads(), before);
  EXPECT_GE(train::cpuCores(), 1);
}

// WorkerTeam: the same threads run every call, each with one intra-op thread and the caller's
// grad mode; the caller's thread count comes back (or, when it waits, never changes); a failure reaches the caller after every
// worker finished, and the team keeps working after it.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "train/thread_share.h"
#include "train/worker_team.h"

using namespace depthlab;

TEST(WorkerTeam, TheSameThreadsRunEveryCallWithOneIntraOpThreadEach) {
  train::IntraOpThreads two(2);
  train::WorkerTeam team(3);
  EXPECT_EQ(team.size(), 3);
  EXPECT_EQ(torch::get_num_threads(), 2);
  std::mutex mutex;
  std::vector<std::set<std::thread::id>> seen(2);
  std::atomic<int> single{0}, noGrad{0};
  std::thread::id zero;
  for (int call = 0; call < 2; ++call) {
    torch::NoGradGuard ng;
    team.run([&](int w) {
      if (torch::get_num_threads() == 1) ++single;
      if (!torch::GradMode::is_enabled()) ++noGrad;
      std::lock_guard<std::mutex> lock(mutex);
      seen[static_cast<size_t>(call)].insert(std::this_thread::get_id());
      if (w == 0) zero = std::this_thread::get_id();
    });
  }
  EXPECT_EQ(seen[0].size(), 3u);
  EXPECT_EQ(seen[0], seen[1]);
  EXPECT_EQ(zero, std::this_thread::get_id());  // the caller is worker 0
  EXPECT_EQ(single.load(), 6);
  EXPECT_EQ(noGrad.load(), 6);
  EXPECT_EQ(torch::get_num_threads(), 2);
  EXPECT_TRUE(torch::GradMode::is_enabled());
}

TEST(WorkerTeam, ACallerThatWaitsRunsNoWorkerAndKeepsItsThreadCount) {
  train::IntraOpThreads two(2);
  train::WorkerTeam team(2, train::WorkerTeam::Caller::Waits);
  EXPECT_EQ(team.size(), 2);
  EXPECT_EQ(torch::get_num_threads(), 2);
  std::mutex mutex;
  std::vector<std::set<std::thread::id>> seen(2);
  std::atomic<int> single{0}, noGrad{0};
  for (int call = 0; call < 2; ++call) {
    torch::NoGradGuard ng;
    team.run([&](int w) {
      if (torch::get_num_threads() == 1) ++single;
      if (!torch::GradMode::is_enabled()) ++noGrad;
      std::lock_guard<std::mutex> lock(mutex);
      seen[static_cast<size_t>(call)].insert(std::this_thread::get_id());
      EXPECT_GE(w, 0);
      EXPECT_LT(w, 2);
    });
  }
  EXPECT_EQ(seen[0].size(), 2u);
  EXPECT_EQ(seen[0], seen[1]);  // the same two threads every call
  EXPECT_EQ(seen[0].count(std::this_thread::get_id()), 0u);  // neither is the caller
  EXPECT_EQ(single.load(), 4);
  EXPECT_EQ(noGrad.load(), 4);
  EXPECT_EQ(torch::get_num_threads(), 2);
  // A failure of worker 0 (a team thread here) reaches the caller; the team goes on.
  EXPECT_THROW(team.run([&](int w) {
                 if (w == 0) throw std::runtime_error("worker 0 failed");
               }),
               std::runtime_error);
  std::atomic<int> ran{0};
  team.run([&](int) { ++ran; });
  EXPECT_EQ(ran.load(), 2);
}

TEST(WorkerTeam, AFailureReachesTheCallerAndTheTeamGoesOn) {
  train::WorkerTeam team(3);
  std::atomic<int> finished{0};
  EXPECT_THROW(team.run([&](int w) {
                 if (w == 2) throw std::runtime_error("worker 2 failed");
                 ++finished;
               }),
               std::runtime_error);
  EXPECT_EQ(finished.load(), 2);
  std::atomic<int> ran{0};
  team.run([&](int) { ++ran; });
  EXPECT_EQ(ran.load(), 3);
}

TEST(WorkerTeam, OneWorkerIsTheCallerUntouched) {
  train::IntraOpThreads two(2);
  train::WorkerTeam team(1);
  int threads = 0;
  team.run([&](int) { threads = torch::get_num_threads(); });
  EXPECT_EQ(threads, 2);
}

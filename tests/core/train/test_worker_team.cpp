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
#include <vector>

#include "train/thread_share.h"
#include "train/worker_team.h"

using namespace depthlab;

namespace {

// What two no-grad runs of a team saw: the threads of each call, how many bodies had one
// intra-op thread and grad mode off, and the thread that ran worker 0.
struct TwoRuns {
  std::vector<std::set<std::thread::id>> seen{2};
  int single = 0, noGrad = 0;
  std::thread::id zero;
};

TwoRuns runTwice(train::WorkerTeam& team) {
  TwoRuns r;
  std::mutex mutex;
  for (int call = 0; call < 2; ++call) {
    torch::NoGradGuard ng;
    team.run([&](int w) {
      std::lock_guard<std::mutex> lock(mutex);
      if (torch::get_num_threads() == 1) ++r.single;
      if (!torch::GradMode::is_enabled()) ++r.noGrad;
      r.seen[static_cast<size_t>(call)].insert(std::this_thread::get_id());
      if (w == 0) r.zero = std::this_thread::get_id();
    });
  }
  return r;
}

}  // namespace

TEST(WorkerTeam, TheSameThreadsRunEveryCallWithOneIntraOpThreadEach) {
  train::IntraOpThreads two(2);
  train::WorkerTeam team(3);
  EXPECT_EQ(team.size(), 3);
  EXPECT_EQ(torch::get_num_threads(), 2);
  const auto r = runTwice(team);
  EXPECT_EQ(r.seen[0].size(), 3u);
  EXPECT_EQ(r.seen[0], r.seen[1]);
  EXPECT_EQ(r.zero, std::this_thread::get_id());  // the caller is worker 0
  EXPECT_EQ(r.single, 6);
  EXPECT_EQ(r.noGrad, 6);
  EXPECT_EQ(torch::get_num_threads(), 2);
  EXPECT_TRUE(torch::GradMode::is_enabled());
}

TEST(WorkerTeam, ACallerThatWaitsRunsNoWorkerAndKeepsItsThreadCount) {
  train::IntraOpThreads two(2);
  train::WorkerTeam team(2, train::WorkerTeam::Caller::Waits);
  EXPECT_EQ(team.size(), 2);
  EXPECT_EQ(torch::get_num_threads(), 2);
  const auto r = runTwice(team);
  EXPECT_EQ(r.seen[0].size(), 2u);
  EXPECT_EQ(r.seen[0], r.seen[1]);  // the same two threads every call
  EXPECT_EQ(r.seen[0].count(std::this_thread::get_id()), 0u);  // neither is the caller
  EXPECT_TRUE(r.seen[0].count(r.zero));                         // worker 0 is one of them
  EXPECT_EQ(r.single, 4);
  EXPECT_EQ(r.noGrad, 4);
  EXPECT_EQ(torch::get_num_threads(), 2);
  EXPECT_TRUE(torch::GradMode::is_enabled());
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

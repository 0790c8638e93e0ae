// resumeRuns: the runs of a paired group stopped together resume side by side (one start, the
// same losses as a group never stopped); runs that differ resume one after the other, saying why.
#include <gtest/gtest.h>

#include <filesystem>

#include "experiment/run_group.h"
#include "support/model_fixtures.h"
#include "support/run_fixtures.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

experiment::ExperimentConfig pairRun(const test::TempDir& dir) {
  auto c = test::smallConfig(3);
  c.data.corpus = test::writeWordCorpus(dir, 60000);
  c.optim.steps = 10;
  c.run.evalEvery = 0;
  c.schemes = {"pre_ln", "lns"};
  c.name = "pair";
  return c;
}

/// Runs `c` with a stop requested as its runs start: every run stops at its step-0 checkpoint.
std::vector<int64_t> stoppedGroup(const experiment::ExperimentConfig& c, store::RunStore& s,
                                  experiment::RunGroupOptions o) {
  std::atomic<bool> stop{false};
  o.stopFlag = &stop;
  o.onRunsStarted = [&stop](const std::vector<int64_t>&) { stop = true; };
  std::vector<int64_t> ids;
  for (const auto& m : experiment::runGroup(c, s, o).members) ids.push_back(m.runId);
  return ids;
}

}  // namespace

TEST(ResumeRuns, APairStoppedTogetherResumesSideBySideWithTheSameLosses) {
  test::TempDir dir;
  const auto c = pairRun(dir);
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt-ref");
  auto refStore = store::RunStore::open(dir.file("ref.db"));
  const auto ref = experiment::runGroup(c, refStore, o);

  auto s = store::RunStore::open(dir.file("runs.db"));
  o.checkpointDir = dir.file("ckpt");
  const auto ids = stoppedGroup(c, s, o);
  ASSERT_EQ(ids.size(), 2u);
  std::vector<std::vector<int64_t>> starts;
  std::vector<std::string> notices;
  o.onRunsStarted = [&](const std::vector<int64_t>& started) { starts.push_back(started); };
  o.onNotice = [&](const std::string& n) { notices.push_back(n); };
  const auto result = experiment::resumeRuns({ids[0], ids[1], ids[0]}, s, o);  // each once
  ASSERT_EQ(starts.size(), 1u);  // one start for both: side by side
  EXPECT_EQ(starts[0], ids);
  ASSERT_EQ(result.members.size(), 2u);
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(s.run(ids[i])->status, store::RunStatus::Finished);
    const auto loss = s.scalarSeries(ids[i], "loss_train");
    const auto want = refStore.scalarSeries(ref.members[i].runId, "loss_train");
    ASSERT_EQ(loss.size(), want.size());
    for (size_t k = 0; k < loss.size(); ++k) EXPECT_EQ(loss[k].value, want[k].value) << k;
  }
  for (const auto& n : notices) EXPECT_EQ(n.find("one after the other"), std::string::npos) << n;
}

TEST(ResumeRuns, RunsThatDifferResumeOneAfterTheOtherSayingWhy) {
  test::TempDir dir;
  auto a = pairRun(dir);
  a.schemes = {"pre_ln"};
  auto b = a;
  b.schemes = {"lns"};
  b.optim.steps = 8;  // another schedule: not one lockstep group
  b.name = "other";
  auto s = store::RunStore::open(dir.file("runs.db"));
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  const int64_t first = stoppedGroup(a, s, o).front();
  const int64_t second = stoppedGroup(b, s, o).front();
  std::vector<std::string> notices;
  int starts = 0;
  o.onNotice = [&](const std::string& n) { notices.push_back(n); };
  o.onRunsStarted = [&](const std::vector<int64_t>& started) {
    ++starts;
    EXPECT_EQ(started.size(), 1u);
  };
  experiment::resumeRuns({first, second}, s, o);
  EXPECT_EQ(starts, 2);
  bool said = false;
  for (const auto& n : notices) said = said || n.find("one after the other") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_EQ(s.run(first)->status, store::RunStatus::Finished);
  EXPECT_EQ(s.run(second)->status, store::RunStatus::Finished);
  EXPECT_EQ(s.scalarSeries(second, "loss_train").size(), 8u);
}

// A stop between two members' updates leaves one run a step ahead (here: its newest checkpoint
// lost, so it resumes a step behind): the pair still resumes side by side, the run behind
// catching up alone first, and both end with the losses of a pair never stopped.
TEST(ResumeRuns, RunsAtDifferentStepsStillResumeSideBySide) {
  test::TempDir dir;
  auto c = pairRun(dir);
  c.run.checkpointEvery = 1;
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt-ref");
  auto longer = c;  // the reference: straight to 14 steps on the 10-step schedule
  longer.optim.steps = 14;
  longer.optim.scheduleSteps = 10;
  auto refStore = store::RunStore::open(dir.file("ref.db"));
  const auto ref = experiment::runGroup(longer, refStore, o);

  auto s = store::RunStore::open(dir.file("runs.db"));
  o.checkpointDir = dir.file("ckpt");
  std::vector<int64_t> ids;
  for (const auto& m : experiment::runGroup(c, s, o).members) ids.push_back(m.runId);
  const auto newest = s.checkpoints(ids[1]).back();
  ASSERT_EQ(newest.step, 10);
  std::filesystem::remove(newest.path);  // run 2 resumes from step 9, run 1 from 10
  std::vector<std::vector<int64_t>> starts;
  o.onRunsStarted = [&](const std::vector<int64_t>& started) { starts.push_back(started); };
  o.resumeToStep = 14;
  experiment::resumeRuns(ids, s, o);
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0], ids);
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto loss = s.scalarSeries(ids[i], "loss_train");
    const auto want = refStore.scalarSeries(ref.members[i].runId, "loss_train");
    ASSERT_EQ(loss.back().step, 13);
    EXPECT_EQ(loss.back().value, want.back().value) << i;
  }
}

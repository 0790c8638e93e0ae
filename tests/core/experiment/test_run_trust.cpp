// Trust in the run loop: checkpoints belong to one database and run and are checked before
// use, wall-time checkpoints with pruning, a locked store never kills training, resume falls
// back past a broken checkpoint and never takes over a live run, a live run cannot be deleted.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <thread>

#include "experiment/analyze.h"
#include "experiment/run_checkpoints.h"
#include "experiment/run_group.h"
#include "support/model_fixtures.h"
#include "support/run_fixtures.h"
#include "support/error_of.h"
#include "support/temp_dir.h"

using namespace depthlab;
using test::errorOf;
namespace fs = std::filesystem;

namespace {

std::string writeCorpus(const test::TempDir& dir) { return test::writeWordCorpus(dir); }

experiment::ExperimentConfig tinyRun(const test::TempDir& dir) {
  auto c = test::smallConfig(2);
  c.data.corpus = writeCorpus(dir);
  c.optim.steps = 12;
  c.run.evalEvery = 0;
  c.schemes = {"lns"};
  c.name = "trust";
  return c;
}


// Another program holding the store's write lock for `ms` once training has started: installs
// an onProgress hook on `o`; join() the returned holder after the group returns.
struct LockHolder {
  std::thread thread;
  bool started = false;
  void arm(experiment::RunGroupOptions& o, const std::string& path, int ms) {
    o.onProgress = [this, path, ms](const experiment::GroupProgress&) {
      if (started) return;
      started = true;
      thread = std::thread([path, ms] {
        store::SqliteDb db(path, SQLITE_OPEN_READWRITE);
        db.exec("BEGIN EXCLUSIVE");
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        db.exec("COMMIT");
      });
    };
  }
  void join() {
    if (thread.joinable()) thread.join();
  }
};

}  // namespace

TEST(RunTrust, RunsOfTwoDatabasesNeverShareACheckpointFolder) {
  test::TempDir dir;
  auto a = store::RunStore::open(dir.file("A.db"));
  auto c = store::RunStore::open(dir.file("C.db"));
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");  // the same base folder for both, as the default is
  auto cfg = tinyRun(dir);
  auto ra = experiment::runGroup(cfg, a, o);
  cfg.model.dModel = 48;  // another width: a wrong file would not even load
  cfg.model.nHeads = 4;
  auto rc = experiment::runGroup(cfg, c, o);
  ASSERT_EQ(ra.members[0].runId, rc.members[0].runId);  // both are run 1
  const auto pa = a.checkpoints(1).back().path, pc = c.checkpoints(1).back().path;
  EXPECT_NE(pa, pc);
  EXPECT_NE(pa.find(a.storeId()), std::string::npos);
  EXPECT_TRUE(fs::exists(pa));
  EXPECT_TRUE(fs::exists(pc));

  // A file of C put where A's checkpoint was (an old collision, a copy by hand) is refused
  // by analyze and resume, naming both sides.
  fs::copy_file(pc, pa, fs::copy_options::overwrite_existing);
  const auto why = errorOf([&] {
    experiment::analyzeCheckpoint(a, 1, std::nullopt, experiment::parseProbeList("variance"));
  });
  EXPECT_NE(why.find("no usable checkpoint"), std::string::npos) << why;
  EXPECT_NE(why.find("does not belong to run 1"), std::string::npos) << why;
  EXPECT_NE(why.find(pa), std::string::npos) << why;
}

TEST(RunTrust, CheckpointHeaderMismatchesAreNamed) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  auto r = experiment::runGroup(tinyRun(dir), s, o);
  const auto run = *s.run(r.members[0].runId);
  const auto rec = s.checkpoints(run.id).back();
  auto owner = experiment::ownerOf(s, run, rec);
  EXPECT_NO_THROW(train::verifyCheckpoint(rec.path, owner));
  auto wrongRun = owner;
  wrongRun.runId = 7;
  EXPECT_NE(errorOf([&] { train::verifyCheckpoint(rec.path, wrongRun); }).find("the run id is 1"),
            std::string::npos);
  auto wrongScheme = owner;
  wrongScheme.scheme = "pre_ln";
  EXPECT_NE(errorOf([&] { train::verifyCheckpoint(rec.path, wrongScheme); }).find("the scheme is lns"),
            std::string::npos);
  auto wrongSum = owner;
  wrongSum.checksum = "0000000000000000";
  EXPECT_NE(errorOf([&] { train::verifyCheckpoint(rec.path, wrongSum); }).find("checksum"),
            std::string::npos);
  auto wrongShape = owner;
  wrongShape.configHash = "ffffffffffffffff";
  EXPECT_NE(errorOf([&] { train::verifyCheckpoint(rec.path, wrongShape); }).find("model config"),
            std::string::npos);
}

TEST(RunTrust, WallTimeCheckpointsArePrunedToTheLastBestAndFinal) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  auto c = tinyRun(dir);
  c.optim.steps = 150;
  c.run.checkpointMinutes = 0.0005;  // every 30 ms
  c.run.checkpointKeep = 2;
  c.run.evalEvery = 50;
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  auto r = experiment::runGroup(c, s, o);
  const int64_t id = r.members[0].runId;
  auto ck = s.checkpoints(id);
  ASSERT_FALSE(ck.empty());
  EXPECT_EQ(ck.back().step, 150);
  EXPECT_LE(ck.size(), 4u);  // last 2 + best + final
  EXPECT_GE(ck.size(), 2u);
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(fs::path(ck.back().path).parent_path())) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, ck.size());  // the store's rows and the folder agree
  for (const auto& k : ck) EXPECT_TRUE(fs::exists(k.path)) << k.path;
}

TEST(RunTrust, PruningKeepsTheLastNTheBestAndTheFinal) {
  using experiment::checkpointsToPrune;
  EXPECT_EQ(checkpointsToPrune({10, 20, 30, 40, 50}, 2, 20, std::nullopt),
            (std::vector<int64_t>{10, 30}));
  EXPECT_EQ(checkpointsToPrune({10, 20, 30}, 3, std::nullopt, std::nullopt), std::vector<int64_t>{});
  EXPECT_EQ(checkpointsToPrune({50, 10, 30}, 1, std::nullopt, 10), (std::vector<int64_t>{30}));
}

TEST(RunTrust, ALockedStoreDelaysMetricsButNeverKillsTraining) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  s.setBusyTimeout(50);
  auto c = tinyRun(dir);
  c.optim.steps = 400;
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  std::vector<std::string> notices;
  o.onNotice = [&](const std::string& n) { notices.push_back(n); };
  LockHolder holder;  // another program holds the lock
  holder.arm(o, dir.file("runs.db"), 1500);
  experiment::GroupResult r;
  ASSERT_NO_THROW(r = experiment::runGroup(c, s, o));
  holder.join();
  const int64_t id = r.members[0].runId;
  EXPECT_EQ(s.run(id)->status, store::RunStatus::Finished);
  EXPECT_EQ(s.scalarSeries(id, "loss_train").size(), 400u);  // nothing lost
  bool warned = false;
  for (const auto& e : s.events(id)) warned = warned || e.message.find("unwritable") != std::string::npos;
  EXPECT_TRUE(warned);
  EXPECT_GE(notices.size(), 2u);  // it failed, then it recovered
}

TEST(RunTrust, ResumeSkipsABrokenNewestCheckpointAndSaysWhy) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  auto c = tinyRun(dir);
  c.run.checkpointEvery = 4;
  std::atomic<bool> stop{false};
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  o.stopFlag = &stop;
  o.onProgress = [&](const experiment::GroupProgress& p) { if (p.step >= 9) stop = true; };
  auto first = experiment::runGroup(c, s, o);
  const int64_t id = first.members[0].runId;
  auto ck = s.checkpoints(id);
  ASSERT_GE(ck.size(), 2u);
  const auto newest = ck.back(), older = ck[ck.size() - 2];
  fs::resize_file(newest.path, fs::file_size(newest.path) / 2);  // truncated
  o.stopFlag = nullptr;
  o.onProgress = nullptr;
  std::vector<std::string> notices;
  o.onNotice = [&](const std::string& n) { notices.push_back(n); };
  auto r = experiment::resumeRun(id, s, o);
  EXPECT_EQ(s.run(id)->status, store::RunStatus::Finished);
  bool skippedEvent = false, resumedFromOlder = false;
  for (const auto& e : s.events(id)) {
    if (e.message.find("skipped the checkpoint at step " + std::to_string(newest.step)) != std::string::npos) skippedEvent = true;
    if (e.message.find("resumed from step " + std::to_string(older.step)) != std::string::npos) resumedFromOlder = true;
  }
  EXPECT_TRUE(skippedEvent);
  EXPECT_TRUE(resumedFromOlder);
  EXPECT_FALSE(notices.empty());
}

TEST(RunTrust, ALiveRunIsNeitherResumedNorDeleted) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  store::NewRun nr;
  nr.name = "busy";
  nr.scheme = "lns";
  nr.configJson = experiment::toJson(tinyRun(dir)).dump();
  const int64_t id = s.createRun(nr);
  s.markRunning(id);  // this process trains it
  const auto resume = errorOf([&] { experiment::resumeRun(id, s, {}); });
  EXPECT_NE(resume.find("is being trained by pid " + std::to_string(getpid())), std::string::npos)
      << resume;
  const auto rm = errorOf([&] { s.deleteRun(id); });
  EXPECT_NE(rm.find("still training"), std::string::npos) << rm;
  EXPECT_TRUE(s.run(id));
  s.finishRun(id, store::RunStatus::Stopped);
  EXPECT_TRUE(s.deleteRun(id));
}

TEST(RunTrust, AStoreUnwritablePastTheLimitStopsTheGroupWithACheckpoint) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  s.setBusyTimeout(20);
  auto c = tinyRun(dir);
  c.optim.steps = 100000;
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  o.storeGiveUpSeconds = 1.0;
  LockHolder holder;  // another program holds the lock
  holder.arm(o, dir.file("runs.db"), 1600);
  experiment::GroupResult r;
  ASSERT_NO_THROW(r = experiment::runGroup(c, s, o));
  holder.join();
  const int64_t id = r.members[0].runId;
  EXPECT_EQ(s.run(id)->status, store::RunStatus::Stopped);
  EXPECT_LT(r.members[0].step, 100000);
  auto ck = s.checkpoints(id);
  ASSERT_FALSE(ck.empty());
  EXPECT_EQ(ck.back().step, r.members[0].step);
  EXPECT_TRUE(fs::exists(ck.back().path));
  bool said = false;
  for (const auto& e : s.events(id)) said = said || e.message.find("stayed unwritable") != std::string::npos;
  EXPECT_TRUE(said);
  // everything up to the stop was recorded
  EXPECT_EQ(s.scalarSeries(id, "loss_train").size(), static_cast<size_t>(r.members[0].step));
}

TEST(RunTrust, ACheckpointThatCannotBeWrittenIsAWarningNotACrash) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  test::writeFile(dir.file("not-a-folder"), "x");  // checkpoints cannot go under a file
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("not-a-folder");
  auto r = experiment::runGroup(tinyRun(dir), s, o);
  const int64_t id = r.members[0].runId;
  EXPECT_EQ(s.run(id)->status, store::RunStatus::Finished);
  EXPECT_EQ(s.scalarSeries(id, "loss_train").size(), 12u);
  bool warned = false;
  for (const auto& e : s.events(id)) {
    warned = warned || e.message.find("could not write the checkpoint at step 12") != std::string::npos;
  }
  EXPECT_TRUE(warned);
}

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

TEST(RunTrust, ACheckpointFolderThatCannotBeWrittenRefusesTheGroupBeforeItTrains) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  test::writeFile(dir.file("not-a-folder"), "x");  // checkpoints cannot go under a file
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("not-a-folder");
  const auto why = errorOf([&] { experiment::runGroup(tinyRun(dir), s, o); });
  EXPECT_NE(why.find("cannot write checkpoints to '" + dir.file("not-a-folder")), std::string::npos) << why;
  EXPECT_NE(why.find("could not be resumed"), std::string::npos) << why;
  EXPECT_TRUE(s.listRuns().empty());  // refused before any run was created
}

TEST(RunTrust, AStoreThatStaysUnwritableKeepsItsNewestRecordedCheckpointAndResumeFindsTheRest) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  s.setBusyTimeout(20);
  auto c = tinyRun(dir);
  c.optim.steps = 100000;
  c.run.checkpointMinutes = 0.0005;  // every 30 ms: many checkpoints while the store is locked
  c.run.checkpointKeep = 2;
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  o.storeGiveUpSeconds = 0.8;
  LockHolder holder;  // held past the give-up and the last retries: the process ends unrecorded
  holder.arm(o, dir.file("runs.db"), 2600);
  const auto why = errorOf([&] { experiment::runGroup(c, s, o); });
  EXPECT_NE(why.find("stayed unwritable"), std::string::npos) << why;
  holder.join();
  const int64_t id = 1;
  s.setStatus(id, store::RunStatus::Crashed);  // as a killed process leaves it (this one is alive)
  const auto rows = s.checkpoints(id);
  ASSERT_FALSE(rows.empty());
  EXPECT_TRUE(fs::exists(rows.back().path)) << rows.back().path;  // pruning kept it
  int64_t newest = 0;
  size_t files = 0;
  for (const auto& f : experiment::checkpointFilesIn(fs::path(rows.back().path).parent_path().string())) {
    newest = std::max(newest, f.first);
    ++files;
  }
  EXPECT_GT(newest, rows.back().step);  // written while the store refused their rows
  EXPECT_LE(files, 4u);                  // the last 2, the final, the newest recorded
  experiment::RunGroupOptions again;
  again.checkpointDir = dir.file("ckpt");
  again.resumeToStep = newest + 2;
  ASSERT_NO_THROW(experiment::resumeRun(id, s, again));
  bool fromNewest = false, gapNamed = false;
  for (const auto& e : s.events(id)) {
    if (e.message.find("resumed from step " + std::to_string(newest) + " (") != 0) continue;
    fromNewest = true;
    gapNamed = e.message.find("were never recorded") != std::string::npos;
  }
  EXPECT_TRUE(fromNewest);
  EXPECT_TRUE(gapNamed);  // the steps whose metrics the locked store never took
  EXPECT_EQ(s.run(id)->status, store::RunStatus::Finished);
  EXPECT_EQ(s.checkpoints(id).back().step, newest + 2);
}

TEST(RunTrust, ARunKilledBeforeItsFirstCheckpointRestartsFromStepZero) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  experiment::runGroup(tinyRun(dir), s, o);  // run 1: the same run, never interrupted
  // What a kill before the first checkpoint leaves: the run's row, a metric, no checkpoint.
  store::NewRun nr;
  nr.name = "killed";
  nr.scheme = "lns";
  nr.seed = s.run(1)->seed;
  nr.configJson = s.run(1)->configJson;
  const int64_t id = s.createRun(nr);
  store::WriteBatch b;
  b.scalar(0, "loss_train", 99.0);
  s.write(id, b);
  s.setStatus(id, store::RunStatus::Crashed);
  std::vector<std::string> notices;
  o.onNotice = [&](const std::string& n) { notices.push_back(n); };
  ASSERT_NO_THROW(experiment::resumeRun(id, s, o));
  EXPECT_EQ(s.run(id)->status, store::RunStatus::Finished);
  const auto a = s.scalarSeries(1, "loss_train"), r = s.scalarSeries(id, "loss_train");
  ASSERT_EQ(r.size(), 12u);
  EXPECT_NEAR(r.front().value, a.front().value, 1e-4);  // its weights at step 0: its seed's
  EXPECT_NEAR(r.back().value, a.back().value, 1e-3);
  bool said = false;
  for (const auto& n : notices) said = said || n.find("from step 0 (it wrote no checkpoint") != std::string::npos;
  EXPECT_TRUE(said);
  // A finished run with no checkpoint is not trained again.
  const int64_t done = s.createRun(nr);
  s.finishRun(done, store::RunStatus::Finished);
  EXPECT_NE(errorOf([&] { experiment::resumeRun(done, s, o); }).find("no usable checkpoint"),
            std::string::npos);
}

TEST(RunTrust, ACopiedDatabaseTakesItsOwnIdAndLeavesTheOriginalsCheckpointsAlone) {
  test::TempDir dir;
  auto c = tinyRun(dir);
  c.run.checkpointEvery = 4;
  c.run.checkpointKeep = 1;
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  std::string idA;
  std::vector<std::string> filesA;
  {
    auto a = store::RunStore::open(dir.file("A.db"));
    experiment::runGroup(c, a, o);
    idA = a.storeId();
    for (const auto& k : a.checkpoints(1)) filesA.push_back(k.path);
  }
  ASSERT_FALSE(filesA.empty());
  fs::copy_file(dir.file("A.db"), dir.file("B.db"));  // cp A.db B.db
  if (fs::exists(dir.file("A.db-wal"))) fs::copy_file(dir.file("A.db-wal"), dir.file("B.db-wal"));
  auto b = store::RunStore::open(dir.file("B.db"));
  ASSERT_EQ(b.storeId(), idA);
  std::vector<std::string> notices;
  o.onNotice = [&](const std::string& n) { notices.push_back(n); };
  o.resumeToStep = 24;
  ASSERT_NO_THROW(experiment::resumeRun(1, b, o));  // from A's file, which B's rows name
  EXPECT_NE(b.storeId(), idA);
  EXPECT_EQ(b.formerStoreIds(), std::vector<std::string>{idA});
  for (const auto& f : filesA) EXPECT_TRUE(fs::exists(f)) << f;
  EXPECT_EQ(b.checkpoints(1).back().step, 24);
  EXPECT_NE(b.checkpoints(1).back().path.find(b.storeId()), std::string::npos);
  bool said = false;
  for (const auto& n : notices) said = said || n.find("is a copy of " + fs::weakly_canonical(dir.file("A.db")).string()) != std::string::npos;
  EXPECT_TRUE(said);
  // The original keeps its id and resumes from its own newest file.
  auto a = store::RunStore::open(dir.file("A.db"));
  EXPECT_EQ(a.storeId(), idA);
  o.resumeToStep = 16;
  o.onNotice = nullptr;
  ASSERT_NO_THROW(experiment::resumeRun(1, a, o));
  bool fromOwn = false;
  for (const auto& e : a.events(1)) fromOwn = fromOwn || e.message.find("resumed from step 12 (" + filesA.back()) == 0;
  EXPECT_TRUE(fromOwn);
}

TEST(RunTrust, ACheckpointThatCannotBeWrittenIsAWarningNotACrashAndTheRunIsNotFinished) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  o.onRunsStarted = [&](const std::vector<int64_t>& ids) {  // the run's folder: a file in the way
    const auto runDir = fs::path(dir.file("ckpt")) / s.storeId() / ("run-" + std::to_string(ids[0]));
    fs::create_directories(runDir.parent_path());
    test::writeFile(runDir.string(), "x");
  };
  auto r = experiment::runGroup(tinyRun(dir), s, o);
  const int64_t id = r.members[0].runId;
  // Training went on to the end, but without its final checkpoint the run is not finished
  // (test_run_folders.cpp): stopped, resumable, and saying why.
  EXPECT_EQ(s.run(id)->status, store::RunStatus::Stopped);
  EXPECT_EQ(s.scalarSeries(id, "loss_train").size(), 12u);
  bool warned = false, unfinished = false;
  for (const auto& e : s.events(id)) {
    warned = warned || e.message.find("could not write the checkpoint at step 12") != std::string::npos;
    unfinished = unfinished || e.message.find("not finished: its last checkpoint (step 12)") == 0;
  }
  EXPECT_TRUE(warned);
  EXPECT_TRUE(unfinished);
}

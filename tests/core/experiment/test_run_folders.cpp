// A run's files stay its own: a new run never inherits a folder of its id, a run that could not
// write its last checkpoint is not "finished", paths are recorded absolute so resume works from
// any directory and keeps writing into the run's own folder, and a run whose recorded files are
// gone is never restarted from step 0 without a word.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>

#include "experiment/run_checkpoints.h"
#include "experiment/run_config.h"
#include "experiment/run_group.h"
#include "support/error_of.h"
#include "support/model_fixtures.h"
#include "support/run_fixtures.h"
#include "support/temp_dir.h"

using namespace depthlab;
using test::errorOf;
namespace fs = std::filesystem;

namespace {

experiment::ExperimentConfig tinyRun(const test::TempDir& dir, int steps = 12) {
  auto c = test::smallConfig(2);
  c.data.corpus = test::writeWordCorpus(dir);
  c.optim.steps = steps;
  c.run.evalEvery = 0;
  c.run.checkpointEvery = 2;
  c.schemes = {"lns"};
  c.name = "folders";
  return c;
}

bool anyEventContains(store::RunStore& s, int64_t runId, const std::string& text) {
  for (const auto& e : s.events(runId)) {
    if (e.message.find(text) != std::string::npos) return true;
  }
  return false;
}

int eventsContaining(store::RunStore& s, int64_t runId, const std::string& text) {
  int n = 0;
  for (const auto& e : s.events(runId)) n += e.message.find(text) != std::string::npos;
  return n;
}

// Changes the working directory for one scope.
struct WorkingDirectory {
  fs::path before = fs::current_path();
  explicit WorkingDirectory(const std::string& dir) { fs::current_path(dir); }
  ~WorkingDirectory() { fs::current_path(before); }
};

}  // namespace

TEST(RunFolders, ANewRunMovesAsideAFolderOfItsIdThatHoldsCheckpoints) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  const auto first = experiment::runGroup(tinyRun(dir), s, o);
  const int64_t next = first.members[0].runId + 1;
  // What a deleted run of a database from before migration 005 left: files in run-<next>/.
  const std::string inherited = experiment::runCheckpointDir(s, next, o.checkpointDir);
  fs::create_directories(inherited);
  fs::copy_file(s.checkpoints(first.members[0].runId).back().path, inherited + "/step-40.ckpt");
  const auto second = experiment::runGroup(tinyRun(dir), s, o);
  ASSERT_EQ(second.members[0].runId, next);
  EXPECT_TRUE(fs::exists(inherited + ".set-aside-1/step-40.ckpt"));
  EXPECT_FALSE(fs::exists(inherited + "/step-40.ckpt"));
  for (const auto& c : s.checkpoints(next)) EXPECT_LE(c.step, 12);
  EXPECT_TRUE(anyEventContains(s, next, "moved to " + inherited + ".set-aside-1"));
}

TEST(RunFolders, ARunThatCannotWriteItsLastCheckpointIsNotFinished) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  // A file where the run's folder goes: every checkpoint write fails, as on a full disk.
  const std::string folder = experiment::runCheckpointDir(s, 1, o.checkpointDir);
  fs::create_directories(fs::path(folder).parent_path());
  test::writeFile(folder, "not a folder");
  const auto r = experiment::runGroup(tinyRun(dir), s, o);
  const auto& m = r.members[0];
  EXPECT_EQ(m.status, store::RunStatus::Stopped);
  EXPECT_NE(m.unfinishedBecause.find("could not be written"), std::string::npos) << m.unfinishedBecause;
  EXPECT_NE(m.unfinishedBecause.find("no checkpoint"), std::string::npos) << m.unfinishedBecause;
  EXPECT_EQ(s.run(m.runId)->status, store::RunStatus::Stopped);
  EXPECT_TRUE(anyEventContains(s, m.runId, "not finished"));
  // Six failed writes (every 2 steps and the end) are said once, not six times.
  EXPECT_EQ(eventsContaining(s, m.runId, "could not write the checkpoint"), 1);
}

TEST(RunFolders, ARunWhoseLastCheckpointsAreLostSaysWhichStepItsReadersRead) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  const std::string folder = experiment::runCheckpointDir(s, 1, o.checkpointDir);
  // The disk "fills" after the first update (whose checkpoint, step 1, is written): the
  // folder is swapped for a file until the run has ended.
  bool full = false;
  o.onPhase = [&](double, const std::string& what) {
    if (what.rfind("first step done", 0) != 0) return;
    full = true;
    fs::rename(folder, folder + ".kept");
    test::writeFile(folder, "full");
  };
  auto c = tinyRun(dir);
  c.run.checkpointEvery = 1;
  const auto r = experiment::runGroup(c, s, o);
  ASSERT_TRUE(full);
  EXPECT_EQ(r.members[0].status, store::RunStatus::Stopped);
  fs::remove(folder);
  fs::rename(folder + ".kept", folder);  // room again
  const auto run = *s.run(1);
  const auto newest = experiment::newestVerifiedCheckpoint(s, run);
  EXPECT_EQ(newest.info.step, 1);
  const auto note = experiment::checkpointGapNote(s, run, newest.info.step);
  EXPECT_NE(note.find("trained 12 steps"), std::string::npos) << note;
  EXPECT_EQ(experiment::checkpointGapNote(s, run, 12), "");
  // Resumable once there is room: it trains the lost steps again and finishes.
  const auto resumed = experiment::resumeRun(1, s, o);
  EXPECT_EQ(resumed.members[0].status, store::RunStatus::Finished);
  EXPECT_EQ(s.checkpoints(1).back().step, 12);
}

TEST(RunFolders, RelativePathsAreRecordedAbsoluteAndResumeKeepsTheRunsFolder) {
  test::TempDir dir;
  fs::create_directories(dir.file("project"));
  fs::create_directories(dir.file("elsewhere"));
  test::writeWordCorpus(dir);
  fs::rename(dir.file("corpus.txt"), dir.file("project/corpus.txt"));
  const std::string db = dir.file("runs.db");
  std::atomic<bool> stop{false};  // set as the run starts: it stops at its step-0 checkpoint
  int64_t id = 0;
  {
    WorkingDirectory here(dir.file("project"));
    auto s = store::RunStore::open(db);
    auto c = tinyRun(dir);
    c.data.corpus = "corpus.txt";  // relative, as typed
    experiment::RunGroupOptions o;
    o.checkpointDir = "tck2";
    o.stopFlag = &stop;
    o.onRunsStarted = [&](const std::vector<int64_t>&) { stop = true; };
    const auto r = experiment::runGroup(c, s, o);
    id = r.members[0].runId;
    ASSERT_EQ(r.members[0].status, store::RunStatus::Stopped);
    for (const auto& ck : s.checkpoints(id)) EXPECT_TRUE(fs::path(ck.path).is_absolute()) << ck.path;
    EXPECT_TRUE(fs::path(experiment::configOf(*s.run(id)).data.corpus).is_absolute());
  }
  WorkingDirectory there(dir.file("elsewhere"));
  auto s = store::RunStore::open(db);
  std::vector<std::string> notices;
  experiment::RunGroupOptions o;  // no --checkpoint-dir: the run's own folder
  o.onNotice = [&](const std::string& n) { notices.push_back(n); };
  const auto r = experiment::resumeRun(id, s, o);
  EXPECT_EQ(r.members[0].status, store::RunStatus::Finished);
  EXPECT_TRUE(anyEventContains(s, id, "resumed from step"));
  EXPECT_FALSE(anyEventContains(s, id, "restarted from step 0"));
  const std::string own = fs::path(dir.file("project/tck2")).lexically_normal().string();
  for (const auto& ck : s.checkpoints(id)) {
    EXPECT_EQ(ck.path.rfind(own, 0), 0u) << ck.path << " is not under " << own;
  }
  EXPECT_FALSE(fs::exists(dir.file("elsewhere/tck2")));
}

TEST(RunFolders, ResumeRefusesToRestartARunWhoseRecordedFilesAreGone) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  std::atomic<bool> stop{false};
  o.stopFlag = &stop;
  o.onRunsStarted = [&](const std::vector<int64_t>&) { stop = true; };
  const auto r = experiment::runGroup(tinyRun(dir), s, o);
  const int64_t id = r.members[0].runId;
  const auto rows = s.checkpoints(id);
  ASSERT_FALSE(rows.empty());
  for (const auto& ck : rows) fs::remove(ck.path);
  stop = false;
  const auto why = errorOf([&] { experiment::resumeRun(id, s, experiment::RunGroupOptions{}); });
  EXPECT_NE(why.find("none of their files is there"), std::string::npos) << why;
  EXPECT_NE(why.find("missing " + rows.back().path), std::string::npos) << why;
  EXPECT_NE(why.find("not restarted from step 0"), std::string::npos) << why;
  EXPECT_EQ(s.run(id)->status, store::RunStatus::Stopped);
}

// The crash campaign's disk cases: the run database on a 16 MB tmpfs that fills up while
// `train` runs (checkpoints on the ordinary disk, as when a database sits on a small home
// partition). Space that returns lets the queued metrics drain with no step lost; a disk that
// stays full and a SIGKILL on top lose no checkpoint the database names, and `resume` finds the
// newer checkpoints no row names. Mounting needs root (CI runs as root); elsewhere it skips.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "experiment/experiment_config.h"
#include "store/run_store.h"
#include "support/background_process.h"
#include "support/build_paths.h"
#include "support/model_fixtures.h"
#include "support/temp_dir.h"

using namespace depthlab;
namespace fs = std::filesystem;

namespace {

// A tmpfs of `kib` KiB at `path` for the test's lifetime (not mounted when not permitted).
struct SmallDisk {
  std::string path;
  bool mounted = false;
  SmallDisk(const std::string& p, int kib) : path(p) {
    fs::create_directories(p);
    mounted =
        ::mount("tmpfs", p.c_str(), "tmpfs", 0, ("size=" + std::to_string(kib) + "k").c_str()) == 0;
  }
  ~SmallDisk() {
    if (mounted) ::umount2(path.c_str(), MNT_DETACH);
  }
  uint64_t freeBytes() const {
    struct statvfs v {};
    return ::statvfs(path.c_str(), &v) == 0 ? uint64_t(v.f_bavail) * v.f_frsize : 0;
  }
  // Fills the disk with a file `filler` until `leave` bytes are free.
  void fillLeaving(uint64_t leave) const {
    const uint64_t free = freeBytes();
    std::ofstream out(path + "/filler", std::ios::binary);
    const std::string block(4096, 'x');
    for (uint64_t n = 0; n + leave < free; n += block.size()) out << block;
  }
};

std::string writeExperiment(const test::TempDir& dir, int steps) {
  std::string text;
  for (int i = 0; text.size() < 40000; ++i)
    text += "layer norm scaling fixes the curse of depth " + std::to_string(i % 89) + "\n";
  test::writeFile(dir.file("corpus.txt"), text);
  auto c = test::smallConfig(2);
  c.model.vocabSize = 257;
  c.data.corpus = dir.file("corpus.txt");
  c.optim.steps = steps;
  c.optim.warmupSteps = 10;
  c.run.evalEvery = 50;
  c.run.checkpointMinutes = 0.003;  // every ~0.2 s
  c.schemes = {"lns"};
  c.name = "full-disk";
  experiment::saveConfigFile(c, dir.file("exp.json"));
  return dir.file("exp.json");
}

// Waits until the disk has under 32 KiB free (SQLite's writes then fail) or `pid` ended.
bool waitUntilFull(const SmallDisk& disk, pid_t pid) {
  for (int i = 0; i < 1200; ++i) {
    if (disk.freeBytes() < 32 * 1024) return true;
    if (waitpid(pid, nullptr, WNOHANG) == pid) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return false;
}

bool hasEvent(store::RunStore& s, int64_t run, const std::string& text) {
  for (const auto& e : s.events(run))
    if (e.message.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(CrashCampaign, ADatabaseDiskThatFillsLosesNoStepAndOneThatStaysFullLosesNoCheckpoint) {
  test::TempDir dir;
  SmallDisk disk(dir.file("x"), 16384);
  if (!disk.mounted) GTEST_SKIP() << "mounting a tmpfs needs root (CI runs as root)";
  const int steps = 1500;
  const std::string exp = writeExperiment(dir, steps);
  const std::string cli = depthlab::test::cliPath(), db = disk.path + "/f.db", ck = dir.file("ck");
  disk.fillLeaving(320 * 1024);

  // 1. The disk fills mid-run, then space returns: every step lands, the run finishes.
  pid_t pid = test::launchQuiet(
      {cli, "--db", db, "train", "--config", exp, "--checkpoint-dir", ck, "--quiet"});
  ASSERT_TRUE(waitUntilFull(disk, pid)) << "the database never filled the disk";
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  fs::remove(disk.path + "/filler");
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  {
    auto s = store::RunStore::open(db);
    EXPECT_EQ(s.integrityCheck(), "ok");
    EXPECT_EQ(s.run(1)->status, store::RunStatus::Finished);
    EXPECT_EQ(s.scalarSeries(1, "loss_train").size(), static_cast<size_t>(steps));
    EXPECT_TRUE(hasEvent(s, 1, "unwritable for")) << "the disk did not refuse a write";
    for (const auto& k : s.checkpoints(1)) EXPECT_TRUE(fs::exists(k.path)) << k.path;
  }

  // 2. The disk stays full and the process is killed: no row names a deleted file, and once
  //    space returns `resume` takes the newest checkpoint on disk, which no row names.
  disk.fillLeaving(160 * 1024);  // room for the run's first rows only
  pid = test::launchQuiet(
      {cli, "--db", db, "train", "--config", exp, "--checkpoint-dir", ck, "--quiet"});
  ASSERT_TRUE(waitUntilFull(disk, pid)) << "the database never filled the disk";
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));  // ~10 checkpoints unrecorded
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  int64_t recorded = 0;
  {
    auto s = store::RunStore::open(db, store::RunStore::Mode::ReadOnly);
    ASSERT_TRUE(s.run(2));
    for (const auto& k : s.checkpoints(2)) {
      EXPECT_TRUE(fs::exists(k.path)) << k.path << " was pruned while its row was the newest";
      recorded = std::max(recorded, k.step);
    }
  }
  fs::remove(disk.path + "/filler");
  std::string out;
  EXPECT_EQ(test::runCommand(cli + " --db " + db + " resume 2 --checkpoint-dir " + ck, &out), 0)
      << out;
  EXPECT_NE(out.find("had not recorded"), std::string::npos) << out;
  auto s = store::RunStore::open(db);
  EXPECT_EQ(s.integrityCheck(), "ok");
  EXPECT_EQ(s.run(2)->status, store::RunStatus::Finished);
  const auto loss = s.scalarSeries(2, "loss_train");
  ASSERT_FALSE(loss.empty());
  EXPECT_EQ(loss.back().step, steps - 1);
  const int64_t missing = steps - static_cast<int64_t>(loss.size());
  std::printf(
      "full disk: newest recorded checkpoint %lld; %lld steps' metrics were only in the "
      "killed process's memory\n",
      static_cast<long long>(recorded), static_cast<long long>(missing));
}

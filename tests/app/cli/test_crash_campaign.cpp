// The crash campaign: `train` and `resume` killed with SIGKILL at random moments, again and
// again, on a tiny model with frequent wall-time checkpoints. After every kill the database must
// pass SQLite's integrity check and each run's loss series must be contiguous; at the end every
// run resumes to its last step with no step missing. Prints "N kills: X corrupt, Y lost steps".
// Also single cases: a kill before the first checkpoint (resume restarts from step 0), a copied
// database (it never prunes the original's checkpoints), a checkpoint folder that is a file.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "experiment/experiment_config.h"
#include "store/run_store.h"
#include "support/background_process.h"
#include "support/build_paths.h"
#include "support/model_fixtures.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

// Steps of `key` that are missing below the last one recorded (0 when contiguous).
int64_t gaps(store::RunStore& s, int64_t run, int64_t upTo) {
  auto series = s.scalarSeries(run, "loss_train");
  int64_t missing = 0, expect = 0;
  for (const auto& p : series) {
    if (p.step >= upTo) break;
    missing += p.step - expect;
    expect = p.step + 1;
  }
  return missing;
}

}  // namespace

TEST(CrashCampaign, KilledRunsResumeWithNothingLostOrCorrupt) {
  test::TempDir dir;
  std::string text;
  for (int i = 0; text.size() < 40000; ++i)
    text += "layer norm scaling fixes the curse of depth " + std::to_string(i % 89) + "\n";
  test::writeFile(dir.file("corpus.txt"), text);
  auto c = test::smallConfig(3);
  c.model.vocabSize = 257;  // the byte tokenizer's (a config must not say otherwise)
  c.data.corpus = dir.file("corpus.txt");
  c.optim.steps = 400;
  c.optim.warmupSteps = 10;
  c.run.evalEvery = 100;
  c.run.checkpointMinutes = 0.003;  // every ~0.2 s
  c.schemes = {"pre_ln", "lns"};
  c.name = "campaign";
  experiment::saveConfigFile(c, dir.file("exp.json"));
  const std::string cli = depthlab::test::cliPath(), db = dir.file("runs.db"), ck = dir.file("ck");
  std::mt19937 rng(20261130);
  std::uniform_int_distribution<int> delayMs(150, 900);

  int kills = 0, corrupt = 0;
  int64_t lost = 0;
  // 1. train, killed once the first checkpoints exist
  pid_t pid = test::launchQuiet({cli, "--db", db, "train", "--config", dir.file("exp.json"),
                                 "--checkpoint-dir", ck, "--quiet"});
  for (int i = 0; i < 400; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    try {
      auto s = store::RunStore::open(db, store::RunStore::Mode::ReadOnly);
      auto runs = s.listRuns();
      if (runs.size() == 2 && !s.checkpoints(runs[0].id).empty() &&
          !s.checkpoints(runs[1].id).empty())
        break;
    } catch (const std::exception&) {}
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(delayMs(rng)));
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  ++kills;
  // 2. resume, killed at random moments, alternating between the runs
  for (int round = 0; round < 10; ++round) {
    const int run = 1 + round % 2;
    pid =
        test::launchQuiet({cli, "--db", db, "resume", std::to_string(run), "--checkpoint-dir", ck});
    std::this_thread::sleep_for(std::chrono::milliseconds(delayMs(rng)));
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    ++kills;
    auto s = store::RunStore::open(db);
    if (s.integrityCheck() != "ok") ++corrupt;
    for (int r : {1, 2}) {
      auto last = s.scalarSeries(r, "loss_train");
      if (!last.empty()) lost += gaps(s, r, last.back().step);
    }
  }
  // 3. both runs finish
  for (int run : {1, 2}) {
    std::string out;
    const int rc = test::runCommand(
        cli + " --db " + db + " resume " + std::to_string(run) + " --checkpoint-dir " + ck, &out);
    EXPECT_EQ(rc, 0) << out;
  }
  auto s = store::RunStore::open(db);
  EXPECT_EQ(s.integrityCheck(), "ok");
  for (int run : {1, 2}) {
    EXPECT_EQ(s.run(run)->status, store::RunStatus::Finished);
    auto series = s.scalarSeries(run, "loss_train");
    lost += c.optim.steps - static_cast<int64_t>(series.size());  // steps are unique keys
    EXPECT_EQ(series.size(), static_cast<size_t>(c.optim.steps));
    EXPECT_LE(s.checkpoints(run).size(), static_cast<size_t>(c.run.checkpointKeep) + 2);
  }
  EXPECT_EQ(corrupt, 0);
  EXPECT_EQ(lost, 0);
  std::printf("crash campaign: %d kills: %d corrupt, %lld lost steps\n", kills, corrupt,
              static_cast<long long>(lost));
}

namespace {

// A tiny experiment for the single-kill tests below.
std::string writeTinyExperiment(const test::TempDir& dir, int steps, int checkpointEvery) {
  std::string text;
  for (int i = 0; text.size() < 20000; ++i)
    text += "the curse of depth " + std::to_string(i % 53) + "\n";
  test::writeFile(dir.file("corpus.txt"), text);
  auto c = test::smallConfig(2);
  c.model.vocabSize = 257;  // the byte tokenizer's
  c.data.corpus = dir.file("corpus.txt");
  c.optim.steps = steps;
  c.run.evalEvery = 0;
  c.run.checkpointEvery = checkpointEvery;
  c.run.checkpointKeep = 1;
  c.schemes = {"lns"};
  c.name = "single";
  experiment::saveConfigFile(c, dir.file("exp.json"));
  return dir.file("exp.json");
}

}  // namespace

TEST(CrashCampaign, ARunKilledBeforeItsFirstCheckpointResumesFromStepZero) {
  test::TempDir dir;
  const std::string exp = writeTinyExperiment(dir, 1000000, 0);  // wall-time checkpoints: 10 min
  const std::string cli = depthlab::test::cliPath(), db = dir.file("runs.db"), ck = dir.file("ck");
  pid_t pid = test::launchQuiet(
      {cli, "--db", db, "train", "--config", exp, "--checkpoint-dir", ck, "--quiet"});
  bool trained = false;
  for (int i = 0; i < 400 && !trained; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    try {
      auto s = store::RunStore::open(db, store::RunStore::Mode::ReadOnly);
      trained = s.run(1) && !s.scalarSeries(1, "loss_train").empty();
    } catch (const std::exception&) {}
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  ASSERT_TRUE(trained);
  ASSERT_TRUE(store::RunStore::open(db).checkpoints(1).empty());
  std::string out;
  const int rc =
      test::runCommand(cli + " --db " + db + " resume 1 --steps 20 --checkpoint-dir " + ck, &out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("from step 0 (it wrote no checkpoint"), std::string::npos) << out;
  auto s = store::RunStore::open(db);
  EXPECT_EQ(s.run(1)->status, store::RunStatus::Finished);
  EXPECT_EQ(s.checkpoints(1).back().step, 20);
}

TEST(CrashCampaign, ACopiedDatabaseNeverPrunesTheOriginalsCheckpoints) {
  test::TempDir dir;
  const std::string exp = writeTinyExperiment(dir, 20, 5);
  const std::string cli = depthlab::test::cliPath(), a = dir.file("A.db"), b = dir.file("B.db"),
                    ck = dir.file("ck");
  std::string out;
  ASSERT_EQ(test::runCommand(cli + " --db " + a + " train --config " + exp + " --checkpoint-dir " +
                                 ck + " --quiet",
                             &out),
            0)
      << out;
  std::vector<std::string> files;
  for (const auto& k : store::RunStore::open(a).checkpoints(1)) files.push_back(k.path);
  ASSERT_FALSE(files.empty());
  ASSERT_EQ(test::runCommand("cp " + a + " " + b), 0);
  EXPECT_EQ(
      test::runCommand(cli + " --db " + b + " resume 1 --steps 40 --checkpoint-dir " + ck, &out), 0)
      << out;
  EXPECT_NE(out.find("is a copy of"), std::string::npos) << out;
  for (const auto& f : files) EXPECT_TRUE(std::filesystem::exists(f)) << f;
  EXPECT_EQ(
      test::runCommand(cli + " --db " + a + " resume 1 --steps 30 --checkpoint-dir " + ck, &out), 0)
      << out;
  EXPECT_NE(out.find("from step 20 (" + files.back()), std::string::npos) << out;
  EXPECT_NE(store::RunStore::open(a).storeId(), store::RunStore::open(b).storeId());
}

TEST(CrashCampaign, ACheckpointDirThatIsAFileFailsBeforeTraining) {
  test::TempDir dir;
  const std::string exp = writeTinyExperiment(dir, 20, 5);
  test::writeFile(dir.file("a-file"), "x");
  const std::string cli = depthlab::test::cliPath(), db = dir.file("runs.db");
  std::string out;
  const int rc = test::runCommand(cli + " --db " + db + " train --config " + exp +
                                      " --checkpoint-dir " + dir.file("a-file") + " --quiet",
                                  &out);
  EXPECT_NE(rc, 0) << out;
  EXPECT_NE(out.find("cannot write checkpoints to"), std::string::npos) << out;
  EXPECT_TRUE(store::RunStore::open(db).listRuns().empty());
}

// The crash campaign: `train` and `resume` killed with SIGKILL at random moments, again and
// again, on a tiny model with frequent wall-time checkpoints. After every kill the database must
// pass SQLite's integrity check and each run's loss series must be contiguous; at the end every
// run resumes to its last step with no step missing. Prints "N kills: X corrupt, Y lost steps".
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "experiment/experiment_config.h"
#include "store/run_store.h"
#include "support/model_fixtures.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

pid_t launch(const std::vector<std::string>& args) {
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

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
  for (int i = 0; text.size() < 40000; ++i) text += "layer norm scaling fixes the curse of depth " + std::to_string(i % 89) + "\n";
  test::writeFile(dir.file("corpus.txt"), text);
  auto c = test::smallConfig(3);
  c.data.corpus = dir.file("corpus.txt");
  c.optim.steps = 400;
  c.optim.warmupSteps = 10;
  c.run.evalEvery = 100;
  c.run.checkpointMinutes = 0.003;  // every ~0.2 s
  c.schemes = {"pre_ln", "lns"};
  c.name = "campaign";
  experiment::saveConfigFile(c, dir.file("exp.json"));
  const std::string cli = DEPTHLAB_CLI_PATH, db = dir.file("runs.db"), ck = dir.file("ck");
  std::mt19937 rng(20261130);
  std::uniform_int_distribution<int> delayMs(150, 900);

  int kills = 0, corrupt = 0;
  int64_t lost = 0;
  // 1. train, killed once the first checkpoints exist
  pid_t pid = launch({cli, "--db", db, "train", "--config", dir.file("exp.json"), "--checkpoint-dir", ck, "--quiet"});
  for (int i = 0; i < 400; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    try {
      auto s = store::RunStore::open(db, store::RunStore::Mode::ReadOnly);
      auto runs = s.listRuns();
      if (runs.size() == 2 && !s.checkpoints(runs[0].id).empty() && !s.checkpoints(runs[1].id).empty()) break;
    } catch (const std::exception&) {
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(delayMs(rng)));
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  ++kills;
  // 2. resume, killed at random moments, alternating between the runs
  for (int round = 0; round < 10; ++round) {
    const int run = 1 + round % 2;
    pid = launch({cli, "--db", db, "resume", std::to_string(run), "--checkpoint-dir", ck});
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
    const int rc = test::runCommand(cli + " --db " + db + " resume " + std::to_string(run) +
                                        " --checkpoint-dir " + ck, &out);
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

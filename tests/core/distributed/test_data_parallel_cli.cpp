// Data-parallel training end to end through depthlab-cli, on Gloo over loopback: 2 ranks train
// what 1 rank trains (same losses, same weights, one run per scheme in the store); a killed rank
// ends the group with the run marked crashed and no rank left waiting; a run continues on a
// different number of ranks from its checkpoint along the same loss curve; a finished run is
// trained further on two ranks exactly as one planned longer; rank 0 on a taken port asks the
// launcher for another port only when the launcher chose it.
#include <gtest/gtest.h>

#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <thread>

#include "distributed/local_launcher.h"
#include "experiment/experiment_config.h"
#include "experiment/run_config.h"
#include "model/decoder.h"
#include "store/run_store.h"
#include "support/build_paths.h"
#include "support/held_port.h"
#include "support/model_fixtures.h"
#include "support/run_fixtures.h"
#include "support/temp_dir.h"
#include "train/checkpoint.h"
#include "util/remove_tree.h"

using namespace depthlab;
using Clock = std::chrono::steady_clock;

namespace {

const std::string kCli = depthlab::test::cliPath();

// Starts depthlab-cli with `args` and extra environment variables; output goes to `log`.
pid_t start(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
            const std::string& log) {
  pid_t pid = fork();
  if (pid == 0) {
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv{const_cast<char*>(kCli.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    freopen(log.c_str(), "a", stdout);
    freopen(log.c_str(), "a", stderr);
    execv(kCli.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

// Exit code (128 + signal when killed), or -1 when it did not end within `seconds`.
int waitFor(pid_t pid, double seconds) {
  const auto t0 = Clock::now();
  while (std::chrono::duration<double>(Clock::now() - t0).count() < seconds) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

int run(const std::vector<std::string>& args, const std::string& log,
        const std::map<std::string, std::string>& env = {}) {
  const pid_t pid = start(args, env, log);
  const int rc = waitFor(pid, 600);
  if (rc < 0) kill(pid, SIGKILL);
  return rc;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

experiment::ExperimentConfig dpConfig(const test::TempDir& dir) {
  auto c = test::smallConfig(3);
  c.data.corpus = test::writeWordCorpus(dir, 80000);
  c.optim.steps = 20;
  c.optim.batchSize = 4;
  c.optim.gradAccum = 2;
  c.run.evalEvery = 10;
  c.run.checkpointMinutes = 0;
  c.run.threads = 1;
  c.schemes = {"pre_ln", "lns"};
  return c;
}

// run id of `scheme` in `group`
int64_t runOf(store::RunStore& s, const std::string& group, const std::string& scheme) {
  for (const auto& r : s.listRuns()) {
    if (r.groupName == group && r.scheme == scheme) return r.id;
  }
  ADD_FAILURE() << "no run " << group << "/" << scheme;
  return -1;
}

std::map<int64_t, double> losses(store::RunStore& s, int64_t run) {
  std::map<int64_t, double> out;
  for (const auto& p : s.scalarSeries(run, "loss_train")) out[p.step] = p.value;
  return out;
}

std::vector<torch::Tensor> weightsOf(store::RunStore& s, int64_t run) {
  const auto info = *s.run(run);
  const auto c = experiment::configOf(info);
  const std::string checkpoint = s.checkpoints(run).back().path;
  model::Decoder m(c.model, c.options, info.scheme);
  train::loadCheckpoint(checkpoint, m, nullptr, torch::kCPU);
  std::vector<torch::Tensor> out;
  for (const auto& p : m->parameters()) out.push_back(p.detach().clone());
  return out;
}

void sqlExec(const std::string& db, const std::string& sql) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(h);
}

}  // namespace

TEST(DataParallelCli, TwoRanksTrainWhatOneRankTrainsAndTheStoreHoldsOneRunPerScheme) {
  test::TempDir dir;
  auto c = dpConfig(dir);
  experiment::saveConfigFile(c, dir.file("exp.json"));
  const std::string db = dir.file("runs.db"), log = dir.file("log.txt");
  ASSERT_EQ(run({"--db", db, "train", "--config", dir.file("exp.json"), "--name", "one",
                 "--checkpoint-dir", dir.file("ck"), "--quiet"},
                log),
            0)
      << slurp(log);
  ASSERT_EQ(run({"--db", db, "train", "--config", dir.file("exp.json"), "--name", "two", "--nproc",
                 "2", "--dist-timeout", "60", "--bucket-mb", "0.02", "--checkpoint-dir",
                 dir.file("ck"), "--quiet"},
                log),
            0)
      << slurp(log);
  auto s = store::RunStore::open(db);
  EXPECT_EQ(s.listRuns().size(), 4u) << "one run per scheme and group, not one per rank";
  for (const std::string scheme : {"pre_ln", "lns"}) {
    const int64_t one = runOf(s, "one", scheme), two = runOf(s, "two", scheme);
    EXPECT_EQ(s.run(two)->status, store::RunStatus::Finished);
    EXPECT_NE(s.run(two)->device.find("x2 gloo"), std::string::npos) << s.run(two)->device;
    auto a = losses(s, one), b = losses(s, two);
    ASSERT_EQ(a.size(), 20u);
    ASSERT_EQ(b.size(), 20u);
    for (const auto& [step, v] : a) EXPECT_NEAR(b[step], v, 1e-5) << scheme << " step " << step;
    EXPECT_LT(a.rbegin()->second, a.begin()->second);  // it learned something
    const auto wa = weightsOf(s, one);
    const auto wb = weightsOf(s, two);
    EXPECT_EQ(s.checkpoints(two).back().step, 20);
    ASSERT_EQ(wa.size(), wb.size());
    for (size_t i = 0; i < wa.size(); ++i) {
      EXPECT_TRUE(torch::allclose(wa[i], wb[i], 1e-5, 1e-6))
          << scheme << " parameter " << i << " differs by "
          << (wa[i] - wb[i]).abs().max().item<float>();
    }
    // probes and evaluations come from rank 0 alone, as in a single process
    EXPECT_EQ(s.scalarSeries(two, "loss_val").size(), s.scalarSeries(one, "loss_val").size());
  }
}

TEST(DataParallelCli, AKilledRankEndsTheGroupAndTheRunIsMarkedCrashed) {
  test::TempDir dir;
  auto c = dpConfig(dir);
  c.optim.steps = 100000;
  c.schemes = {"lns"};
  experiment::saveConfigFile(c, dir.file("exp.json"));
  const std::string db = dir.file("runs.db");
  const double timeout = 10;
  for (int victim : {1, 0}) {
    const std::string group = "kill-rank-" + std::to_string(victim), log = dir.file(group + ".txt");
    const int port = distributed::freeLoopbackPort();
    std::vector<pid_t> ranks;
    for (int r = 0; r < 2; ++r) {  // as torchrun starts them
      ranks.push_back(start({"--db", db, "train", "--config", dir.file("exp.json"), "--name", group,
                             "--dist-timeout", "10", "--checkpoint-dir", dir.file("ck"), "--quiet"},
                            {{"RANK", std::to_string(r)},
                             {"WORLD_SIZE", "2"},
                             {"LOCAL_RANK", std::to_string(r)},
                             {"MASTER_ADDR", "127.0.0.1"},
                             {"MASTER_PORT", std::to_string(port)}},
                            log));
    }
    // training is under way once rank 0 has recorded a few steps
    int64_t run = -1;
    for (int i = 0; i < 600 && run < 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      try {
        auto s = store::RunStore::open(db, store::RunStore::Mode::ReadOnly);
        for (const auto& r : s.listRuns()) {
          if (r.groupName == group && s.scalarSeries(r.id, "loss_train").size() >= 5) run = r.id;
        }
      } catch (const std::exception&) {}
    }
    ASSERT_GT(run, 0) << slurp(log);
    kill(ranks[static_cast<size_t>(victim)], SIGKILL);
    EXPECT_EQ(waitFor(ranks[static_cast<size_t>(victim)], 10), 128 + SIGKILL);
    const auto t0 = Clock::now();
    const int rc = waitFor(ranks[static_cast<size_t>(1 - victim)], timeout + 20);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (rc < 0) kill(ranks[static_cast<size_t>(1 - victim)], SIGKILL);
    EXPECT_GT(rc, 0) << "the surviving rank must fail, not hang or succeed\n" << slurp(log);
    EXPECT_LT(seconds, timeout + 20);
    const std::string out = slurp(log);
    EXPECT_NE(out.find("failed"), std::string::npos) << out;
    auto s = store::RunStore::open(db);
    s.reapCrashedRuns();  // a killed rank 0 could not say so itself: its process is gone
    EXPECT_EQ(s.run(run)->status, store::RunStatus::Crashed) << group;
    if (victim == 1) {  // rank 0 recorded why
      bool said = false;
      for (const auto& e : s.events(run))
        said = said || e.message.find("data-parallel training failed") != std::string::npos;
      EXPECT_TRUE(said);
    }
  }
}

TEST(DataParallelCli, ARunContinuesOnADifferentNumberOfRanksAlongTheSameCurve) {
  test::TempDir dir;
  auto c = dpConfig(dir);
  c.schemes = {"lns"};
  c.run.checkpointEvery = 10;
  experiment::saveConfigFile(c, dir.file("exp.json"));
  const std::string db = dir.file("runs.db"), log = dir.file("log.txt"), ck = dir.file("ck");
  ASSERT_EQ(run({"--db", db, "train", "--config", dir.file("exp.json"), "--name", "one",
                 "--checkpoint-dir", ck, "--quiet"},
                log),
            0)
      << slurp(log);
  ASSERT_EQ(run({"--db", db, "train", "--config", dir.file("exp.json"), "--name", "two", "--nproc",
                 "2", "--checkpoint-dir", ck, "--quiet"},
                log),
            0)
      << slurp(log);
  int64_t one = 0, two = 0;
  std::map<int64_t, double> reference;
  {
    auto s = store::RunStore::open(db);
    one = runOf(s, "one", "lns");
    two = runOf(s, "two", "lns");
    reference = losses(s, one);
    // Back to step 10: the final checkpoints and the losses after step 10 are gone.
    for (int64_t id : {one, two}) {
      for (const auto& ckpt : s.checkpoints(id)) {
        if (ckpt.step == 20) std::filesystem::remove(ckpt.path);
      }
    }
  }
  sqlExec(db, "DELETE FROM scalars WHERE step >= 10 AND key = 'loss_train'");
  // the 2-rank run continues on 1 rank, the 1-rank run on 2 ranks
  ASSERT_EQ(
      run({"--db", db, "resume", std::to_string(two), "--nproc", "1", "--checkpoint-dir", ck}, log),
      0)
      << slurp(log);
  // and without its token store: rank 0 prepares it again before the other rank maps it (two
  // ranks preparing one store at once wrote each other's shards)
  ASSERT_GT(util::removeTree(c.data.corpus + ".byte.dlstore"), 0);
  ASSERT_EQ(
      run({"--db", db, "resume", std::to_string(one), "--nproc", "2", "--checkpoint-dir", ck}, log),
      0)
      << slurp(log);
  auto s = store::RunStore::open(db);
  for (int64_t id : {one, two}) {
    auto resumed = losses(s, id);
    ASSERT_EQ(resumed.size(), 20u) << "run " << id;
    for (int64_t step = 10; step < 20; ++step) {
      EXPECT_NEAR(resumed[step], reference[step], 1e-5) << "run " << id << " step " << step;
    }
    EXPECT_EQ(s.run(id)->status, store::RunStatus::Finished);
  }
}

// A run killed after its last checkpoint but before it was marked finished has no step left
// to train, but its end (final evaluation, probes, status) is still to record: on two ranks
// both take part (the other rank had returned at once and rank 0's broadcast failed).
TEST(DataParallelCli, ARunThatCrashedAfterItsLastCheckpointIsEndedOnTwoRanks) {
  test::TempDir dir;
  auto c = dpConfig(dir);
  c.schemes = {"lns"};
  experiment::saveConfigFile(c, dir.file("exp.json"));
  const std::string db = dir.file("runs.db"), log = dir.file("log.txt"), ck = dir.file("ck");
  ASSERT_EQ(run({"--db", db, "train", "--config", dir.file("exp.json"), "--name", "g", "--nproc",
                 "2", "--checkpoint-dir", ck, "--quiet"},
                log),
            0)
      << slurp(log);
  int64_t id = 0;
  {
    auto s = store::RunStore::open(db);
    id = runOf(s, "g", "lns");
  }
  sqlExec(db, "UPDATE runs SET status = 'crashed' WHERE id = " + std::to_string(id));
  sqlExec(db, "DELETE FROM scalars WHERE run_id = " + std::to_string(id) + " AND key = 'loss_val'");
  ASSERT_EQ(
      run({"--db", db, "resume", std::to_string(id), "--nproc", "2", "--checkpoint-dir", ck}, log),
      0)
      << slurp(log);
  auto s = store::RunStore::open(db);
  EXPECT_EQ(s.run(id)->status, store::RunStatus::Finished);
  const auto val = s.scalarSeries(id, "loss_val");
  ASSERT_FALSE(val.empty());
  EXPECT_EQ(val.back().step, 20);
  EXPECT_EQ(losses(s, id).size(), 20u);  // nothing trained twice
}

// A finished run trained further on two ranks (resume --steps N: rank 0 retargets the config,
// then names the checkpoint to the other rank, which takes its config) follows a two-rank run
// planned for N steps on the first run's schedule: the same losses and learning rates.
TEST(DataParallelCli, AFinishedRunIsTrainedFurtherOnTwoRanksAsIfPlannedLonger) {
  test::TempDir dir;
  auto c = dpConfig(dir);
  c.schemes = {"pre_ln"};
  experiment::saveConfigFile(c, dir.file("short.json"));
  c.optim.steps = 30;
  c.optim.scheduleSteps = 20;  // the schedule of the 20-step run, then its floor
  experiment::saveConfigFile(c, dir.file("long.json"));
  const std::string db = dir.file("runs.db"), log = dir.file("log.txt"), ck = dir.file("ck");
  ASSERT_EQ(run({"--db", db, "train", "--config", dir.file("short.json"), "--name", "short",
                 "--nproc", "2", "--checkpoint-dir", ck, "--quiet"},
                log),
            0)
      << slurp(log);
  ASSERT_EQ(run({"--db", db, "train", "--config", dir.file("long.json"), "--name", "long",
                 "--nproc", "2", "--checkpoint-dir", ck, "--quiet"},
                log),
            0)
      << slurp(log);
  int64_t extended = 0, planned = 0;
  {
    auto s = store::RunStore::open(db);
    extended = runOf(s, "short", "pre_ln");
    planned = runOf(s, "long", "pre_ln");
  }
  ASSERT_EQ(run({"--db", db, "resume", std::to_string(extended), "--steps", "30", "--nproc", "2",
                 "--checkpoint-dir", ck},
                log),
            0)
      << slurp(log);
  auto s = store::RunStore::open(db);
  const auto a = losses(s, extended), b = losses(s, planned);
  ASSERT_EQ(a.size(), 30u);
  ASSERT_EQ(b.size(), 30u);
  for (int64_t step = 0; step < 30; ++step)
    EXPECT_NEAR(a.at(step), b.at(step), 1e-6) << "step " << step;
  const auto lrA = s.scalarSeries(extended, "lr"), lrB = s.scalarSeries(planned, "lr");
  ASSERT_EQ(lrA.size(), lrB.size());
  for (size_t i = 0; i < lrA.size(); ++i)
    EXPECT_DOUBLE_EQ(lrA[i].value, lrB[i].value) << "step " << lrA[i].step;
  EXPECT_EQ(s.run(extended)->status, store::RunStatus::Finished);
  EXPECT_EQ(experiment::configOf(*s.run(extended)).optim.steps, 30);
}

// Rank 0 started by the `--nproc` launcher on a port another process took first exits with
// kExitPortTaken (the launcher then starts the group again on another port); on a port the
// user chose (no DEPTHLAB_PORT_RETRY) it fails plainly, naming the port.
TEST(DataParallelCli, RankZeroOnATakenPortAsksTheLauncherForAnotherOnlyWhenItChoseThePort) {
  test::TempDir dir;
  auto c = dpConfig(dir);
  experiment::saveConfigFile(c, dir.file("exp.json"));
  auto held = std::make_unique<test::HeldPort>();
  const std::string port = std::to_string(held->port());
  std::map<std::string, std::string> env = {{"RANK", "0"},
                                            {"WORLD_SIZE", "2"},
                                            {"LOCAL_RANK", "0"},
                                            {"MASTER_ADDR", "127.0.0.1"},
                                            {"MASTER_PORT", port}};
  const std::vector<std::string> args = {"--db",     dir.file("runs.db"),  "train",
                                         "--config", dir.file("exp.json"), "--dist-timeout",
                                         "20",       "--checkpoint-dir",   dir.file("ck"),
                                         "--quiet"};
  const std::string log = dir.file("log.txt");
  EXPECT_EQ(run(args, log, env), 1) << slurp(log);
  EXPECT_NE(slurp(log).find(port), std::string::npos) << slurp(log);
  env[distributed::kPortRetryVariable] = "1";
  EXPECT_EQ(run(args, log, env), distributed::kExitPortTaken) << slurp(log);
  held.reset();
  auto s = store::RunStore::open(dir.file("runs.db"));
  EXPECT_TRUE(s.listRuns().empty()) << "no run is created before the group exists";
}

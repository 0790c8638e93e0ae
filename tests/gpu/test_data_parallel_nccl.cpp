// Data-parallel training over NCCL, one GPU per rank (label gpu): a one-rank NCCL group follows
// the plain trainer step for step on one GPU; with two or more GPUs, `train --nproc 2 --backend
// nccl` trains what one GPU trains. Skips, saying why, without CUDA, NCCL or enough GPUs.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include "distributed/local_launcher.h"
#include "distributed/process_group.h"
#include "experiment/experiment_config.h"
#include "store/run_store.h"
#include "support/build_paths.h"
#include "support/model_fixtures.h"
#include "support/run_fixtures.h"
#include "support/temp_dir.h"
#include "train/trainer.h"

using namespace depthlab;

#define REQUIRE_NCCL(gpus)                                                                         \
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible to LibTorch";          \
  if (!distributed::ncclAvailable()) GTEST_SKIP() << "this build has no NCCL (Debian's LibTorch)"; \
  if (static_cast<int>(torch::cuda::device_count()) < (gpus))                                      \
  GTEST_SKIP() << "needs " << (gpus) << " GPUs (NCCL takes one per rank), this machine has "       \
               << static_cast<int>(torch::cuda::device_count())

TEST(DataParallelNccl, AOneRankGroupFollowsThePlainTrainerOnOneGpu) {
  REQUIRE_NCCL(1);
  auto c = test::smallConfig(3);
  c.optim.batchSize = 4;
  c.optim.gradAccum = 2;
  data::TokenDataset data(test::patternTokens(6000, c.model.vocabSize), c.model.vocabSize, 0.1,
                          c.model.seqLen, c.optim.batchSize);
  const torch::Device gpu(torch::kCUDA, 0);
  train::Trainer plain(experiment::trainerConfig(c), "lns", gpu);
  train::Trainer ranked(experiment::trainerConfig(c), "lns", gpu);
  distributed::LaunchEnv env;
  env.masterPort = distributed::freeLoopbackPort();
  auto ctx = distributed::DistContext::create(env, "nccl", gpu, 60);
  ranked.setDataParallel(ctx.get(), 0.01);
  for (int s = 0; s < 5; ++s) {
    const double a = plain.trainStep(data, s).loss, b = ranked.trainStep(data, s).loss;
    EXPECT_NEAR(a, b, 1e-5) << "step " << s;
  }
  auto pa = plain.model()->parameters(), pb = ranked.model()->parameters();
  for (size_t i = 0; i < pa.size(); ++i)
    EXPECT_TRUE(torch::allclose(pa[i], pb[i], 1e-5, 1e-6)) << i;
}

TEST(DataParallelNccl, TwoGpusTrainWhatOneGpuTrains) {
  REQUIRE_NCCL(2);
  test::TempDir dir;
  auto c = test::smallConfig(3);
  c.data.corpus = test::writeWordCorpus(dir, 80000);
  c.optim.batchSize = 4;
  c.optim.gradAccum = 2;
  c.run.device = "cuda";
  c.run.checkpointMinutes = 0;
  c.schemes = {"lns"};
  experiment::saveConfigFile(c, dir.file("exp.json"));
  const std::string cli = depthlab::test::cliPath(), db = dir.file("runs.db");
  auto run = [&](std::vector<std::string> args) {
    pid_t pid = fork();
    if (pid == 0) {
      std::vector<char*> argv{const_cast<char*>(cli.c_str())};
      for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(cli.c_str(), argv.data());
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  };
  ASSERT_EQ(
      run({"--db", db, "train", "--config", dir.file("exp.json"), "--name", "one", "--quiet"}), 0);
  ASSERT_EQ(run({"--db", db, "train", "--config", dir.file("exp.json"), "--name", "two", "--nproc",
                 "2", "--backend", "nccl", "--quiet"}),
            0);
  auto s = store::RunStore::open(db);
  auto runs = s.listRuns();
  ASSERT_EQ(runs.size(), 2u);
  auto a = s.scalarSeries(runs[0].groupName == "one" ? runs[0].id : runs[1].id, "loss_train");
  auto b = s.scalarSeries(runs[0].groupName == "one" ? runs[1].id : runs[0].id, "loss_train");
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(a[i].value, b[i].value, 1e-4) << "step " << a[i].step;
}

// Data-parallel gradients over Gloo on loopback, two ranks as two threads of this process:
// the bucketed all-reduce gives every rank the mean gradient, and a data-parallel Trainer
// follows the single-process one step for step.
#include <gtest/gtest.h>

#include <thread>

#include "distributed/gradient_sync.h"
#include "distributed/local_launcher.h"
#include "distributed/process_group.h"
#include "experiment/experiment_config.h"
#include "support/model_fixtures.h"
#include "train/trainer.h"

using namespace depthlab;
using distributed::DistContext;

namespace {

distributed::LaunchEnv rankEnv(int rank, int world, int port) {
  distributed::LaunchEnv e;
  e.rank = e.localRank = rank;
  e.worldSize = world;
  e.masterPort = port;
  return e;
}

// Runs fn(rank, context) on `world` threads, each with its own Gloo group.
template <typename Fn>
void onRanks(int world, Fn fn) {
  const int port = distributed::freeLoopbackPort();
  std::vector<std::thread> threads;
  std::vector<std::string> errors(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      try {
        auto ctx = DistContext::create(rankEnv(r, world, port), "gloo", torch::kCPU, 60);
        fn(r, *ctx);
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(r)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < world; ++r) EXPECT_EQ(errors[static_cast<size_t>(r)], "") << "rank " << r;
}

}  // namespace

TEST(GradientSync, EveryRankGetsTheMeanGradientBucketByBucket) {
  torch::set_num_threads(1);
  // Per rank: the gradients alone (reference) and through the sync.
  auto build = [] {
    torch::manual_seed(7);
    return std::make_pair(torch::nn::Linear(6, 5), torch::nn::Linear(5, 3));
  };
  auto inputOf = [](int rank) { return torch::arange(12, torch::kFloat32).view({2, 6}) * (rank + 1) * 0.1; };
  std::vector<std::vector<torch::Tensor>> alone(2);
  for (int r = 0; r < 2; ++r) {
    auto [a, unused] = build();
    a(inputOf(r)).pow(2).sum().backward();
    for (auto& p : a->parameters()) alone[static_cast<size_t>(r)].push_back(p.grad().clone());
  }
  std::vector<std::vector<torch::Tensor>> synced(2);
  std::vector<char> unusedHasGrad(2, 1);  // not vector<bool>: the ranks write from two threads
  std::vector<size_t> buckets(2);
  std::vector<std::pair<torch::nn::Linear, torch::nn::Linear>> models;  // built here: one RNG
  for (int r = 0; r < 2; ++r) models.push_back(build());
  onRanks(2, [&](int r, DistContext& ctx) {
    auto [a, unused] = models[static_cast<size_t>(r)];
    std::vector<torch::Tensor> params = a->parameters();
    for (auto& p : unused->parameters()) params.push_back(p);
    distributed::GradientSync sync(ctx, params, /*bucketMB=*/1e-5);  // one parameter a bucket
    buckets[static_cast<size_t>(r)] = sync.bucketCount();
    for (int round = 0; round < 2; ++round) {  // a second update reuses the buckets
      for (auto& p : params) p.mutable_grad() = torch::Tensor();
      sync.arm();
      a(inputOf(r)).pow(2).sum().backward();
      sync.finish();
    }
    for (auto& p : a->parameters()) synced[static_cast<size_t>(r)].push_back(p.grad().clone());
    unusedHasGrad[static_cast<size_t>(r)] = unused->weight.grad().defined();
  });
  EXPECT_EQ(buckets[0], 4u);
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(synced[static_cast<size_t>(r)].size(), alone[0].size());
    for (size_t i = 0; i < alone[0].size(); ++i) {
      auto mean = (alone[0][i] + alone[1][i]) / 2;
      EXPECT_TRUE(torch::allclose(synced[static_cast<size_t>(r)][i], mean, 1e-6, 1e-6)) << "rank " << r << " param " << i;
    }
    EXPECT_FALSE(unusedHasGrad[static_cast<size_t>(r)]) << "a parameter without a gradient got one";
  }
  EXPECT_FALSE(torch::allclose(alone[0][0], alone[1][0]));  // the ranks really differed
}

TEST(GradientSync, BucketsStartWhileBackwardStillRuns) {
  torch::set_num_threads(1);
  // Four layers, one bucket each (about 4 KB): every bucket but the last one backward reaches
  // starts its all-reduce from the gradient hooks, before backward returns.
  std::vector<torch::nn::Sequential> models;
  for (int r = 0; r < 2; ++r) {
    torch::manual_seed(3);
    models.emplace_back(torch::nn::Linear(32, 32), torch::nn::Tanh(), torch::nn::Linear(32, 32),
                        torch::nn::Tanh(), torch::nn::Linear(32, 32), torch::nn::Tanh(),
                        torch::nn::Linear(32, 32));
  }
  std::vector<size_t> buckets(2), started(2);
  onRanks(2, [&](int r, DistContext& ctx) {
    auto& m = models[static_cast<size_t>(r)];
    distributed::GradientSync sync(ctx, m->parameters(), /*bucketMB=*/0.004);
    sync.arm();
    m->forward(torch::ones({4, 32}) * (r + 1)).sum().backward();
    sync.finish();
    buckets[static_cast<size_t>(r)] = sync.bucketCount();
    started[static_cast<size_t>(r)] = sync.startedDuringBackward();
  });
  EXPECT_GE(buckets[0], 4u);
  EXPECT_GE(started[0], buckets[0] - 1) << "the all-reduces waited for the end of backward";
  EXPECT_EQ(started[0], started[1]);
}

TEST(DataParallelTrainer, TwoRanksFollowOneProcessStepForStep) {
  torch::set_num_threads(1);
  auto c = test::smallConfig(3);
  c.optim.batchSize = 4;
  c.optim.gradAccum = 2;
  const auto tc = experiment::trainerConfig(c);
  data::TokenDataset data(test::patternTokens(6000, c.model.vocabSize), c.model.vocabSize, 0.1,
                          c.model.seqLen, c.optim.batchSize);
  const int steps = 6;
  train::Trainer single(tc, "lns", torch::kCPU);
  std::vector<double> expected;
  for (int s = 0; s < steps; ++s) expected.push_back(single.trainStep(data, s).loss);

  for (int accum : {2, 1}) {  // whole micro-batches per rank, then rows of each micro-batch
    auto cc = c;
    cc.optim.gradAccum = accum;
    cc.optim.batchSize = 8 / accum;
    data::TokenDataset d2(test::patternTokens(6000, c.model.vocabSize), c.model.vocabSize, 0.1,
                          c.model.seqLen, cc.optim.batchSize);
    train::Trainer ref(experiment::trainerConfig(cc), "lns", torch::kCPU);
    std::vector<double> refLoss;
    for (int s = 0; s < steps; ++s) refLoss.push_back(ref.trainStep(d2, s).loss);
    std::vector<std::unique_ptr<train::Trainer>> ranks;
    for (int r = 0; r < 2; ++r) ranks.push_back(std::make_unique<train::Trainer>(experiment::trainerConfig(cc), "lns", torch::kCPU));
    std::vector<std::vector<double>> losses(2);
    onRanks(2, [&](int r, DistContext& ctx) {
      auto& t = *ranks[static_cast<size_t>(r)];
      t.setDataParallel(&ctx, /*bucketMB=*/0.01);
      for (int s = 0; s < steps; ++s) losses[static_cast<size_t>(r)].push_back(t.trainStep(d2, s).loss);
    });
    for (int s = 0; s < steps; ++s) {
      EXPECT_NEAR(losses[0][static_cast<size_t>(s)], refLoss[static_cast<size_t>(s)], 1e-5) << "accum " << accum << " step " << s;
      EXPECT_NEAR(losses[1][static_cast<size_t>(s)], refLoss[static_cast<size_t>(s)], 1e-5);
    }
    auto p0 = ranks[0]->model()->parameters(), p1 = ranks[1]->model()->parameters(),
         pr = ref.model()->parameters();
    for (size_t i = 0; i < pr.size(); ++i) {
      EXPECT_TRUE(torch::equal(p0[i], p1[i])) << "the ranks drifted apart at parameter " << i;
      EXPECT_TRUE(torch::allclose(p0[i], pr[i], 1e-5, 1e-6)) << "parameter " << i;
    }
  }
  EXPECT_GT(expected.front(), expected.back());
}

TEST(DataParallelTrainer, APeerThatVanishesFailsTheCollectiveInsteadOfHanging) {
  const int port = distributed::freeLoopbackPort();
  std::string error;
  const auto t0 = std::chrono::steady_clock::now();
  std::thread peer([&] {
    auto ctx = DistContext::create(rankEnv(1, 2, port), "gloo", torch::kCPU, 5);
    ctx->barrier();
    // leaves without taking part in the next collective, and closes its connections
  });
  try {
    auto ctx = DistContext::create(rankEnv(0, 2, port), "gloo", torch::kCPU, 5);
    ctx->barrier();
    peer.join();
    ctx->allreduceSum(torch::ones({4}));
  } catch (const distributed::CommError& e) {
    error = e.what();
  }
  if (peer.joinable()) peer.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(error.find("rank 0 of 2 (gloo)"), std::string::npos) << error;
  EXPECT_LT(seconds, 15.0);
}

TEST(DataParallelTrainer, AWaitForAValueRankZeroNeverSetsEndsAtTheGroupsTimeout) {
  const int port = distributed::freeLoopbackPort();
  std::string error;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    auto ctx = DistContext::create(rankEnv(0, 1, port), "gloo", torch::kCPU, 2);
    ctx->waitValue("depthlab/never", "a value nobody sets");
  } catch (const distributed::CommError& e) {
    error = e.what();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(error.find("waited 2 s for a value nobody sets"), std::string::npos) << error;
  EXPECT_LT(seconds, 10.0);
}

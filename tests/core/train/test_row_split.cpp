// The row split against one ordinary backward: the same loss and gradients (to float rounding)
// under every scheme, with gradient accumulation and uneven shares; bit-identical on a repeat;
// an interrupted update leaves no gradient; and the trainer on 2 threads (row split) follows
// the same loss curve as on 1.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <atomic>
#include <map>

#include "experiment/experiment_config.h"
#include "model/decoder.h"
#include "support/model_fixtures.h"
#include "train/row_split.h"
#include "train/row_split_policy.h"
#include "train/thread_share.h"
#include "train/trainer.h"
#include "train/worker_team.h"

using namespace depthlab;

namespace {

using Micro = std::vector<std::pair<torch::Tensor, torch::Tensor>>;

Micro microBatches(const experiment::ExperimentConfig& c, int count, int64_t rows) {
  Micro out;
  for (int i = 0; i < count; ++i) {
    torch::manual_seed(100 + i);
    auto idx = torch::randint(0, c.model.vocabSize, {rows, c.model.seqLen + 1}, torch::kInt64);
    out.emplace_back(idx.slice(1, 0, c.model.seqLen).contiguous(),   // (B, T)
                     idx.slice(1, 1, c.model.seqLen + 1).contiguous());
  }
  return out;
}

std::vector<torch::Tensor> parameters(model::Decoder& m) {
  std::vector<torch::Tensor> out;
  for (const auto& p : m->parameters()) out.push_back(p);
  return out;
}

std::map<std::string, torch::Tensor> gradients(model::Decoder& m) {
  std::map<std::string, torch::Tensor> g;
  for (const auto& p : m->named_parameters()) {
    if (p.value().grad().defined()) g[p.key()] = p.value().grad().clone();
    p.value().mutable_grad() = torch::Tensor();
  }
  return g;
}

}  // namespace

TEST(RowSplit, SharesAreContiguousEvenAndNeverEmpty) {
  using Shares = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(train::rowShares(16, 2), (Shares{{0, 8}, {8, 16}}));
  EXPECT_EQ(train::rowShares(5, 2), (Shares{{0, 3}, {3, 5}}));
  EXPECT_EQ(train::rowShares(7, 3), (Shares{{0, 3}, {3, 5}, {5, 7}}));
  EXPECT_EQ(train::rowShares(3, 8), (Shares{{0, 1}, {1, 2}, {2, 3}}));
  EXPECT_EQ(train::rowShares(4, 1), (Shares{{0, 4}}));
}

TEST(RowSplit, WorkersFollowThreadsRowsAndTheCopyBudget) {
  const double small = 4.0 * 1.2e6, big = 4.0 * 130e6;  // cpu-demo; a 130M-parameter model
  EXPECT_EQ(train::rowSplitWorkers(1, 16, small), 1);
  EXPECT_EQ(train::rowSplitWorkers(2, 16, small), 2);
  EXPECT_EQ(train::rowSplitWorkers(8, 2, small), 2);   // no more workers than rows
  EXPECT_EQ(train::rowSplitWorkers(16, 16, big), 3);   // two 520 MB copies fit in 1 GiB
  EXPECT_EQ(train::rowSplitWorkers(16, 16, 2e9), 1);   // not even one copy: per-op threads
  EXPECT_EQ(train::rowSplitExtraBytes(2, 16, small), small);
  EXPECT_EQ(train::rowSplitExtraBytes(1, 16, small), 0.0);
}

TEST(RowSplit, GradientsEqualOneBackwardUnderEveryScheme) {
  auto c = test::smallConfig(3);
  c.options.layerScale = true;  // its per-channel parameters get gradients too
  const Micro micro = microBatches(c, 2, 5);  // two micro-batches of 5 rows: uneven shares
  for (const auto& scheme : experiment::kSchemes) {
    SCOPED_TRACE(scheme);
    torch::manual_seed(7);
    model::Decoder m(c.model, c.options, scheme);
    m->train();
    double plainLoss = 0;
    {
      train::IntraOpThreads one(1);
      for (const auto& [x, y] : micro) {
        auto loss = m->loss(x, y);
        (loss / 2.0).backward();
        plainLoss += loss.item<double>();
      }
    }
    const auto plain = gradients(m);
    for (int workers : {2, 3}) {
      train::WorkerTeam team(workers);
      auto r = train::rowSplitBackward(m, parameters(m), micro, team, nullptr);
      ASSERT_FALSE(r.interrupted);
      EXPECT_NEAR(r.lossSum.item<double>(), plainLoss, 1e-5) << workers << " workers";
      const auto split = gradients(m);
      ASSERT_EQ(split.size(), plain.size()) << workers << " workers";
      for (const auto& [name, g] : plain) {
        ASSERT_TRUE(split.count(name)) << name;
        EXPECT_TRUE(split.at(name).is_contiguous()) << name;
        EXPECT_TRUE(torch::allclose(split.at(name), g, 1e-4, 1e-7))
            << name << ", " << workers << " workers: max difference "
            << (split.at(name) - g).abs().max().item<double>();
      }
    }
  }
}

TEST(RowSplit, TheSameTeamGivesTheSameBitsTwice) {
  auto c = test::smallConfig(2);
  const Micro micro = microBatches(c, 1, 4);
  torch::manual_seed(3);
  model::Decoder m(c.model, c.options, "lns");
  train::WorkerTeam team(2);
  auto first = train::rowSplitBackward(m, parameters(m), micro, team, nullptr);
  const auto a = gradients(m);
  auto second = train::rowSplitBackward(m, parameters(m), micro, team, nullptr);
  const auto b = gradients(m);
  EXPECT_EQ(first.lossSum.item<float>(), second.lossSum.item<float>());
  for (const auto& [name, g] : a) EXPECT_TRUE(torch::equal(g, b.at(name))) << name;
}

TEST(RowSplit, AnInterruptLeavesNoGradient) {
  auto c = test::smallConfig(2);
  const Micro micro = microBatches(c, 2, 4);
  torch::manual_seed(3);
  model::Decoder m(c.model, c.options, "pre_ln");
  train::WorkerTeam team(2);
  std::atomic<bool> stop{true};
  auto r = train::rowSplitBackward(m, parameters(m), micro, team, &stop);
  EXPECT_TRUE(r.interrupted);
  for (const auto& p : m->parameters()) EXPECT_FALSE(p.grad().defined());
}

TEST(RowSplit, TrainerOnTwoThreadsFollowsTheSameLossesAsOnOne) {
  auto c = test::smallConfig(3);
  c.optim.gradAccum = 2;
  const Micro micro = microBatches(c, 2, c.optim.batchSize);
  std::vector<data::TokenBatch> batches;
  for (const auto& [x, y] : micro) {
    data::TokenBatch b;
    b.batch = x.size(0);
    b.seqLen = x.size(1);
    b.inputs.assign(x.data_ptr<int64_t>(), x.data_ptr<int64_t>() + x.numel());
    b.targets.assign(y.data_ptr<int64_t>(), y.data_ptr<int64_t>() + y.numel());
    batches.push_back(b);
  }
  auto losses = [&](int threads, bool rowSplit) {
    train::IntraOpThreads scope(threads);
    train::Trainer t(experiment::trainerConfig(c), "lns", torch::kCPU);
    t.setRowSplit(rowSplit);
    std::vector<double> out;
    for (int s = 0; s < 6; ++s) out.push_back(t.trainStepOn(batches, s).loss);
    for (const auto& p : t.model()->named_parameters()) {  // every parameter got its gradient
      EXPECT_TRUE(p.value().grad().defined()) << p.key() << ", " << threads << " threads";
    }
    return out;
  };
  const auto one = losses(1, true);
  const auto two = losses(2, true);
  const auto twoPerOp = losses(2, false);
  for (size_t s = 0; s < one.size(); ++s) {
    EXPECT_NEAR(two[s], one[s], 1e-4 * std::abs(one[s])) << "step " << s;
    EXPECT_NEAR(twoPerOp[s], one[s], 1e-4 * std::abs(one[s])) << "step " << s;
  }
  EXPECT_LT(one.back(), one.front());  // it trained
}

// Pads of document packing (targets data::kIgnoreTarget) in training: the loss is the mean over
// the targets that count, pad inputs change neither loss nor gradients, the CPU row split
// weighs its shares by counted targets (a share of pads only included) and equals one
// backward, and the trainer's evaluation on a document dataset is the mean of its batches'.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <map>

#include "data/token_dataset.h"
#include "model/decoder.h"
#include "support/model_fixtures.h"
#include "train/row_split.h"
#include "train/thread_share.h"
#include "train/trainer.h"
#include "train/worker_team.h"

using namespace depthlab;

namespace {

// Rows of (B, T) random tokens; row r keeps `real[r]` counted targets, the rest are pads
// (input `pad`, target -100), as document packing pads them.
std::pair<torch::Tensor, torch::Tensor> paddedRows(const experiment::ExperimentConfig& c,
                                                   const std::vector<int64_t>& real, int64_t pad) {
  torch::manual_seed(11);
  const int64_t B = static_cast<int64_t>(real.size()), T = c.model.seqLen;
  auto w = torch::randint(1, c.model.vocabSize, {B, T + 1}, torch::kInt64);
  auto x = w.slice(1, 0, T).clone(), y = w.slice(1, 1, T + 1).clone();
  for (int64_t r = 0; r < B; ++r) {
    x.index_put_({r, torch::indexing::Slice(real[static_cast<size_t>(r)] + 1, torch::indexing::None)}, pad);
    y.index_put_({r, torch::indexing::Slice(real[static_cast<size_t>(r)], torch::indexing::None)},
                 data::kIgnoreTarget);
  }
  return {x, y};
}

std::map<std::string, torch::Tensor> takeGradients(model::Decoder& m) {
  std::map<std::string, torch::Tensor> g;
  for (const auto& p : m->named_parameters()) {
    if (p.value().grad().defined()) g[p.key()] = p.value().grad().clone();
    p.value().mutable_grad() = torch::Tensor();
  }
  return g;
}

}  // namespace

TEST(PadTargets, TheLossIsTheMeanOverCountedTargetsAndPadInputsChangeNothing) {
  auto c = test::smallConfig(2);
  torch::manual_seed(3);
  model::Decoder m(c.model, c.options, "pre_ln");
  auto [x, y] = paddedRows(c, {16, 5, 1, 9}, 0);
  auto loss = m->loss(x, y);
  const auto g = (loss.backward(), takeGradients(m));
  // The same mean by hand, over the counted positions only.
  auto logits = m->forward(x).reshape({-1, c.model.vocabSize}).to(torch::kFloat32);
  auto keep = y.reshape({-1}).ne(data::kIgnoreTarget).nonzero().squeeze(1);
  auto byHand = torch::nn::functional::cross_entropy(logits.index_select(0, keep),
                                                     y.reshape({-1}).index_select(0, keep));
  EXPECT_NEAR(loss.item<double>(), byHand.item<double>(), 1e-6);
  // Other pad inputs: the same loss and gradients (causal attention, pads on the right).
  auto [x2, y2] = paddedRows(c, {16, 5, 1, 9}, 37);
  auto loss2 = m->loss(x2, y2);
  loss2.backward();
  const auto g2 = takeGradients(m);
  EXPECT_NEAR(loss2.item<double>(), loss.item<double>(), 1e-6);
  for (const auto& [name, grad] : g) {
    EXPECT_TRUE(torch::allclose(g2.at(name), grad, 1e-5, 1e-7)) << name;
  }
}

TEST(PadTargets, TheRowSplitWeighsSharesByCountedTargets) {
  auto c = test::smallConfig(2);
  torch::manual_seed(7);
  model::Decoder m(c.model, c.options, "lns");
  m->train();
  std::vector<std::pair<torch::Tensor, torch::Tensor>> micro = {
      paddedRows(c, {16, 2, 3, 1, 15, 4}, 0),  // uneven counts over the shares
      paddedRows(c, {1, 1, 1, 16, 12, 16}, 0)};
  // A share with nothing but pads (rows 4-5 of 6 with 3 workers) adds nothing.
  micro[1].second.slice(0, 4, 6).fill_(data::kIgnoreTarget);
  double plainLoss = 0;
  {
    train::IntraOpThreads one(1);
    for (const auto& [x, y] : micro) {
      auto loss = m->loss(x, y);
      (loss / 2.0).backward();
      plainLoss += loss.item<double>();
    }
  }
  const auto plain = takeGradients(m);
  std::vector<torch::Tensor> params;
  for (const auto& p : m->parameters()) params.push_back(p);
  for (int workers : {2, 3}) {
    train::WorkerTeam team(workers);
    auto r = train::rowSplitBackward(m, params, micro, team, nullptr);
    EXPECT_NEAR(r.lossSum.item<double>(), plainLoss, 1e-5) << workers << " workers";
    const auto split = takeGradients(m);
    for (const auto& [name, g] : plain) {
      ASSERT_TRUE(split.count(name)) << name;
      EXPECT_TRUE(torch::allclose(split.at(name), g, 1e-4, 1e-7))
          << name << ", " << workers << " workers: max difference "
          << (split.at(name) - g).abs().max().item<double>();
    }
  }
}

TEST(PadTargets, EvaluationOnDocumentsIsTheMeanOfItsBatchesCountedTargets) {
  auto c = test::smallConfig(2);
  // Documents of 3..20 tokens (ids 1..63), each ended by id 0.
  std::vector<int32_t> tokens;
  for (int k = 0; k < 400; ++k) {
    for (int i = 0; i < 3 + k % 18; ++i) tokens.push_back(1 + (k * 7 + i * 3) % 63);
    tokens.push_back(0);
  }
  data::TokenDataset d(tokens, c.model.vocabSize, 0.2, c.model.seqLen, c.optim.batchSize,
                       data::Packing::Document, 0);
  train::TrainerConfig tc;
  tc.model = c.model;
  tc.optim = c.optim;
  train::Trainer trainer(tc, "pre_ln", torch::kCPU);
  const double v = trainer.evaluate(d, 3);
  double byHand = 0;
  for (int i = 0; i < 3; ++i) {
    const auto b = d.valBatch(i, 3);
    auto [x, y] = trainer.toTensors(b);
    ASSERT_TRUE(y.eq(data::kIgnoreTarget).any().item<bool>());  // the rows are padded
    torch::NoGradGuard ng;
    byHand += trainer.model()->loss(x, y).item<double>() / 3;
  }
  EXPECT_NEAR(v, byHand, 1e-6);
  EXPECT_TRUE(std::isfinite(trainer.trainStep(d, 0).loss));
}

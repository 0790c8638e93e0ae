// The probes on a batch with pads (document packing): every statistic is taken over the real
// tokens only (hidden states where the input is a real token, losses where the target is one),
// so what the pad positions hold changes nothing, and the values equal the formulas applied to
// the real tokens by hand. Batches without pads keep their own paths (test_depth_probes).
#include <gtest/gtest.h>

#include <cmath>

#include "data/token_dataset.h"
#include "probes/depth_probes.h"
#include "probes/probe_math.h"
#include "probes/probe_tokens.h"
#include "support/model_fixtures.h"

using namespace depthlab;

namespace {

const std::vector<int64_t> kReal = {16, 4, 9, 1};  // counted targets of each row (T = 16)

// Row r: random tokens, pads after its kReal[r] + 1 real inputs (input `pad`, target -100).
std::pair<torch::Tensor, torch::Tensor> padded(const experiment::ExperimentConfig& c, int64_t pad) {
  torch::manual_seed(21);
  const int64_t B = static_cast<int64_t>(kReal.size()), T = c.model.seqLen;
  auto w = torch::randint(1, c.model.vocabSize, {B, T + 1}, torch::kInt64);
  auto x = w.slice(1, 0, T).clone(), y = w.slice(1, 1, T + 1).clone();
  for (int64_t r = 0; r < B; ++r) {
    const int64_t n = kReal[static_cast<size_t>(r)];
    x.index_put_({r, torch::indexing::Slice(n + 1, torch::indexing::None)}, pad);
    y.index_put_({r, torch::indexing::Slice(n, torch::indexing::None)}, data::kIgnoreTarget);
  }
  return {x, y};
}

model::Decoder build(const experiment::ExperimentConfig& c) {
  torch::manual_seed(5);
  return model::Decoder(c.model, c.options, "lns");
}

void expectNear(const std::vector<float>& a, const std::vector<float>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(b[i])) EXPECT_TRUE(std::isnan(a[i])) << what << " " << i;
    else EXPECT_NEAR(a[i], b[i], 1e-5 * std::max(1.0f, std::abs(b[i]))) << what << " " << i;
  }
}

}  // namespace

TEST(ProbePads, WhatPadsHoldChangesNoProbe) {
  auto c = test::smallConfig(4);
  auto m = build(c);
  auto [x, y] = padded(c, 0);
  auto [x2, y2] = padded(c, 41);
  ASSERT_FALSE(torch::equal(x, x2));
  for (bool last : {false, true}) {
    const auto a = probes::runForwardProbes(m, x, y, {last, true});
    const auto b = probes::runForwardProbes(m, x2, y2, {last, true});
    EXPECT_NEAR(a.probeLoss, b.probeLoss, 1e-6);
    expectNear(a.variance, b.variance, "variance");
    expectNear(a.normVarAttn, b.normVarAttn, "attention norm variance");
    expectNear(a.effectiveness, b.effectiveness, "effectiveness");
    expectNear(a.angularAdjacent, b.angularAdjacent, "angular");
    expectNear(a.blockInfluence, b.blockInfluence, "block influence");
    expectNear(a.angularMatrix, b.angularMatrix, "angular matrix");
  }
  const auto p = probes::singleLayerPruning(m, x, y, false), p2 = probes::singleLayerPruning(m, x2, y2, false);
  expectNear(p.delta, p2.delta, "pruning");
  expectNear(p.standardError, p2.standardError, "pruning error");
  const auto j = probes::jacobianToIdentity(m, x, 2, 3, y), j2 = probes::jacobianToIdentity(m, x2, 2, 3, y2);
  expectNear(j, j2, "jacobian");
}

TEST(ProbePads, StatisticsAreTheFormulasOnTheRealTokens) {
  auto c = test::smallConfig(3);
  c.model.embedStd = 1.0;
  auto m = build(c);
  auto [x, y] = padded(c, 0);
  const auto r = probes::runForwardProbes(m, x, y, {false, false});
  const auto last = probes::runForwardProbes(m, x, y, {true, false});
  model::ForwardTrace t;
  torch::Tensor logits;
  {
    torch::NoGradGuard ng;
    m->eval();
    logits = m->forward(x, {}, &t);
  }
  // Real inputs: row r's first kReal[r] + 1 positions.
  std::vector<int64_t> index, lastIndex;
  const int64_t T = c.model.seqLen;
  for (size_t row = 0; row < kReal.size(); ++row) {
    const int64_t n = std::min<int64_t>(kReal[row] + 1, T);
    for (int64_t k = 0; k < n; ++k) index.push_back(static_cast<int64_t>(row) * T + k);
    lastIndex.push_back(static_cast<int64_t>(row) * T + n - 1);
  }
  auto realOf = [&](const torch::Tensor& h, const std::vector<int64_t>& at) {  // (B, T, C) -> (N, C)
    return h.reshape({-1, h.size(-1)}).index_select(0, torch::tensor(at, torch::kInt64));
  };
  for (size_t l = 0; l < 3; ++l) {
    const auto a = realOf(t.blockInputs[l], index), b = realOf(t.blockInputs[l + 1], index);
    EXPECT_NEAR(r.variance[l], probes::elementVariance(b), 1e-5 * r.variance[l]);
    EXPECT_NEAR(r.effectiveness[l], probes::layerEffectiveness(a, b), 1e-5);
    EXPECT_NEAR(r.angularAdjacent[l], probes::angularDistance(a, b).mean().item<float>(), 1e-5);
    EXPECT_NEAR(r.blockInfluence[l], probes::blockInfluence(a, b), 1e-5);
    EXPECT_NEAR(r.normVarAttn[l], probes::elementVariance(realOf(t.blocks[l].attnNormOut, index)),
                1e-5 * r.normVarAttn[l]);
    // The last token only: each row's last real token (and the variance still over all).
    const auto la = realOf(t.blockInputs[l], lastIndex), lb = realOf(t.blockInputs[l + 1], lastIndex);
    EXPECT_NEAR(last.angularAdjacent[l], probes::angularDistance(la, lb).mean().item<float>(), 1e-5);
    EXPECT_NEAR(last.variance[l], r.variance[l], 1e-5 * r.variance[l]);
  }
  // Losses over the counted targets: the batch's mean, and each sequence's for pruning.
  auto perToken = torch::nn::functional::cross_entropy(
      logits.reshape({-1, logits.size(-1)}), y.reshape({-1}),
      torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone).ignore_index(-100));
  auto counted = y.ne(data::kIgnoreTarget);
  EXPECT_NEAR(r.probeLoss, (perToken.sum() / counted.sum()).item<double>(), 1e-5);
  auto rows = perToken.view({static_cast<int64_t>(kReal.size()), -1}).sum(1) / counted.sum(1);
  EXPECT_TRUE(torch::allclose(probes::sequenceLosses(logits, y, probes::countedTargets(y)), rows, 1e-5, 1e-6));
  // Without pads nothing is masked: the unmasked paths.
  EXPECT_FALSE(probes::realTokens(x).defined());
  EXPECT_FALSE(probes::countedTargets(x).defined());
}

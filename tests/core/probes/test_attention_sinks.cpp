// Attention sinks: with q = 0 every query attends uniformly to its t + 1 keys, so the traced
// entropy is ln(t + 1) and the first key's share 1 / (t + 1); the statistics average those over
// heads and the positions after the first (pads left out); the sink rate counts heads above 0.3;
// a trace without attention statistics gives none.
#include <gtest/gtest.h>

#include <cmath>

#include "probes/attention_sinks.h"
#include "probes/traced_forward.h"
#include "support/model_fixtures.h"

using namespace depthlab;

TEST(AttentionSinks, UniformAttentionHasTheEntropyOfItsKeys) {
  auto c = test::smallConfig(2);
  torch::manual_seed(3);
  model::Decoder m(c.model, c.options, "pre_ln");
  m->eval();
  torch::NoGradGuard ng;
  for (int l = 0; l < 2; ++l) m->block(l)->self_attn->q_proj->weight.zero_();
  const int64_t T = c.model.seqLen;
  auto x = torch::randint(1, c.model.vocabSize, {2, T}, torch::kInt64);
  model::ForwardTrace trace;
  trace.detailed = true;
  probes::tracedForward(m, x, trace);
  const auto& b = trace.blocks[0];
  ASSERT_TRUE(b.attnEntropy.defined());
  const int64_t H = b.attnEntropy.size(1);
  for (int64_t t : {int64_t{0}, int64_t{1}, T - 1}) {
    EXPECT_NEAR(b.attnEntropy[1][H - 1][t].item<double>(), std::log(t + 1.0), 1e-5) << t;
    EXPECT_NEAR(b.attnFirstKey[0][0][t].item<double>(), 1.0 / (t + 1.0), 1e-6) << t;
  }
  double entropy = 0, share = 0;
  for (int64_t t = 1; t < T; ++t) {
    entropy += std::log(t + 1.0);
    share += 1.0 / (t + 1.0);
  }
  auto r = probes::attentionSinks(trace, {});
  ASSERT_EQ(r.entropy.size(), 2u);
  EXPECT_NEAR(r.entropy[0], entropy / (T - 1), 1e-5);
  EXPECT_NEAR(r.firstKeyShare[1], share / (T - 1), 1e-6);
  // Every head gives the first key the same mean share: all above 0.3 or none.
  EXPECT_FLOAT_EQ(r.sinkRate[0], share / (T - 1) > probes::kSinkThreshold ? 1.0f : 0.0f);
  // Row 1 padded after position 2: only its positions 1 and 2 count with row 0's 1..T-1.
  auto real = torch::ones({2, T}, torch::kBool);
  real.index_put_({1, torch::indexing::Slice(3, torch::indexing::None)}, false);
  r = probes::attentionSinks(trace, real);
  const double padded = (share + 1.0 / 2 + 1.0 / 3) / (T - 1 + 2);
  EXPECT_NEAR(r.firstKeyShare[0], padded, 1e-6);
  model::ForwardTrace bare;  // streams only
  bare.blockInputs = {torch::randn({1, 4, 8}), torch::randn({1, 4, 8})};
  bare.blocks.resize(1);
  EXPECT_TRUE(probes::attentionSinks(bare, {}).entropy.empty());
}

TEST(AttentionSinks, TheSinkRateCountsHeadsAboveTheThreshold) {
  // One block, B = 1, H = 2, T = 3: head 0 gives the first key 0.5 at positions 1 and 2 (a sink
  // head), head 1 gives it 0.1 and 0.2 (mean 0.15, not one). Position 0 is left out.
  model::ForwardTrace trace;
  trace.blockInputs = {torch::zeros({1, 3, 4}), torch::zeros({1, 3, 4})};
  trace.blocks.resize(1);
  trace.blocks[0].attnFirstKey = torch::tensor({{{1.0f, 0.5f, 0.5f}, {1.0f, 0.1f, 0.2f}}});
  trace.blocks[0].attnEntropy = torch::tensor({{{0.0f, 0.6f, 1.0f}, {0.0f, 0.2f, 0.2f}}});
  const auto r = probes::attentionSinks(trace, {});
  EXPECT_FLOAT_EQ(r.sinkRate[0], 0.5f);
  EXPECT_NEAR(r.firstKeyShare[0], (0.5 + 0.15) / 2, 1e-6);
  EXPECT_NEAR(r.entropy[0], (0.6 + 1.0 + 0.2 + 0.2) / 4, 1e-6);
  // A row with no query after the first (padded at once): nothing counts, NaN everywhere.
  const auto none = probes::attentionSinks(trace, torch::tensor({{true, false, false}}));
  EXPECT_TRUE(std::isnan(none.sinkRate[0]));
  EXPECT_TRUE(std::isnan(none.firstKeyShare[0]));
}

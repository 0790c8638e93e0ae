// The skip-effect matrix: equal to the same intervention run through the decoder's traced
// forwardFrom and reduced here in float64 (max over positions after the first, mean over rows);
// a block that adds nothing changes nothing when skipped (its row is 0) while the others do;
// NaN on and below the diagonal; pads do not count.
#include <gtest/gtest.h>

#include <cmath>

#include "probes/skip_effect.h"
#include "probes/traced_forward.h"
#include "support/model_fixtures.h"

using namespace depthlab;

namespace {

// E[s][l] the long way: block s's output replaced by its input after position 0, the rest of
// the model run by forwardFrom with a trace; `counted` (B, T) bool.
double reference(model::Decoder& m, const model::ForwardTrace& base, int s, int l,
                 const torch::Tensor& counted) {
  const auto& x = base.blockInputs;
  const int64_t T = x.front().size(1);
  auto h = torch::cat({x[s + 1].narrow(1, 0, 1), x[s].narrow(1, 1, T - 1)}, 1);
  model::ForwardTrace after;
  m->forwardFrom(h, s + 1, {}, &after);  // after.blockInputs[k]: the stream entering s + 1 + k
  const int k = l - (s + 1);
  auto changed = (after.blockInputs[k + 1] - after.blockInputs[k]).to(torch::kFloat64);
  auto original = (x[l + 1] - x[l]).to(torch::kFloat64);
  auto rel = (changed - original).norm(2, -1) / original.norm(2, -1).clamp_min(1e-6);  // (B, T)
  rel = rel.masked_fill(counted.logical_not(), -1e300);
  return rel.amax(1).mean().item<double>();
}

}  // namespace

TEST(SkipEffect, EqualsTheInterventionThroughTheDecodersOwnForward) {
  auto c = test::smallConfig(4);
  for (const char* scheme : {"pre_ln", "lns", "post_ln"}) {
    SCOPED_TRACE(scheme);
    torch::manual_seed(7);
    model::Decoder m(c.model, c.options, scheme);
    auto x = torch::randint(0, c.model.vocabSize, {3, c.model.seqLen}, torch::kInt64);
    const auto r = probes::skipEffect(m, x, x);
    EXPECT_TRUE(m->is_training());  // back in the mode it was in
    torch::NoGradGuard ng;
    m->eval();
    model::ForwardTrace base;
    m->forward(x, {}, &base);
    auto counted = torch::ones({3, c.model.seqLen}, torch::kBool);
    counted.narrow(1, 0, 1).fill_(false);
    for (int s = 0; s < 4; ++s) {
      for (int l = 0; l < 4; ++l) {
        const float v = r.matrix[s * 4 + l];
        if (l <= s) {
          EXPECT_TRUE(std::isnan(v)) << s << "," << l;
          continue;
        }
        EXPECT_NEAR(v, reference(m, base, s, l, counted), 1e-4 * (1 + std::abs(v)))
            << s << "," << l;
        EXPECT_GT(v, 1e-3) << s << "," << l;  // a random block's skip reaches every later one
      }
    }
  }
}

TEST(SkipEffect, ABlockThatAddsNothingChangesNothingWhenSkipped) {
  auto c = test::smallConfig(4);
  torch::manual_seed(3);
  model::Decoder m(c.model, c.options, "pre_ln");
  {
    torch::NoGradGuard ng;  // block 1 writes nothing into the stream
    m->block(1)->self_attn->o_proj->weight.zero_();
    m->block(1)->mlp->down_proj->weight.zero_();
  }
  auto x = torch::randint(0, c.model.vocabSize, {2, c.model.seqLen}, torch::kInt64);
  const auto r = probes::skipEffect(m, x, {});
  EXPECT_NEAR(r.matrix[1 * 4 + 2], 0, 1e-5);
  EXPECT_NEAR(r.matrix[1 * 4 + 3], 0, 1e-5);
  EXPECT_GT(r.matrix[0 * 4 + 2], 1e-3);
  EXPECT_GT(r.matrix[2 * 4 + 3], 1e-3);
}

TEST(SkipEffect, PadsAndTheFirstPositionDoNotCount) {
  auto c = test::smallConfig(3);
  torch::manual_seed(5);
  model::Decoder m(c.model, c.options, "pre_ln");
  const int64_t T = c.model.seqLen;
  auto x = torch::randint(0, c.model.vocabSize, {2, T}, torch::kInt64);
  auto padded = x.clone();
  auto targets = x.clone();
  // Row 1's document ends at position 5: inputs after it are pads (other tokens), targets -100.
  targets[1].narrow(0, 5, T - 5).fill_(-100);
  padded[1].narrow(0, 6, T - 6).fill_(0);
  auto differentPads = padded.clone();
  differentPads[1].narrow(0, 6, T - 6).fill_(9);
  const auto a = probes::skipEffect(m, padded, targets);
  const auto b = probes::skipEffect(m, differentPads, targets);
  for (size_t i = 0; i < a.matrix.size(); ++i) {
    if (std::isnan(a.matrix[i])) continue;
    EXPECT_NEAR(a.matrix[i], b.matrix[i], 1e-6) << i;  // causal: the pads come after the tokens
  }
  // One position: nothing after the first counts.
  const auto one = probes::skipEffect(m, x.narrow(1, 0, 1).contiguous(), {});
  for (float v : one.matrix) EXPECT_TRUE(std::isnan(v));
}

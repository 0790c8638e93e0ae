// Sublayer contributions: a traced pass keeps what each sublayer changed the stream by (x + the
// attention's change is the stream between the sublayers, that plus the MLP's change the block's
// output), for Pre-LN, Post-LN and LNS alike; the statistics equal the formulas over those
// tensors; a trace without the changes (made outside the lab's decoder) gives none.
#include <gtest/gtest.h>

#include <string>

#include "probes/depth_probes.h"
#include "probes/sublayer_contributions.h"
#include "probes/traced_forward.h"
#include "support/model_fixtures.h"

using namespace depthlab;

TEST(SublayerContributions, TheTraceKeepsEachSublayersChangeAndTheStatisticsReadIt) {
  auto c = test::smallConfig(3);
  for (const char* scheme : {"pre_ln", "post_ln", "lns"}) {
    SCOPED_TRACE(scheme);
    torch::manual_seed(4);
    model::Decoder m(c.model, c.options, scheme);
    m->eval();
    torch::NoGradGuard ng;
    auto x = torch::randint(1, c.model.vocabSize, {2, c.model.seqLen}, torch::kInt64);
    model::ForwardTrace trace;
    trace.detailed = true;
    probes::tracedForward(m, x, trace);
    for (size_t l = 0; l < 3; ++l) {
      const auto& b = trace.blocks[l];
      ASSERT_TRUE(b.attnDelta.defined() && b.ffnDelta.defined() && b.attnStream.defined() &&
                  b.ffnStream.defined());
      EXPECT_TRUE(torch::equal(b.attnStream, trace.blockInputs[l]));
      if (std::string(scheme) != "post_ln") {  // additive: x + a = h, h + m = the output
        EXPECT_TRUE(torch::allclose(b.attnStream + b.attnDelta, b.ffnStream, 1e-5, 1e-5));
        EXPECT_TRUE(
            torch::allclose(b.ffnStream + b.ffnDelta, trace.blockInputs[l + 1], 1e-5, 1e-5));
      } else {  // N(x + a): the branch, not the norm's rescaling
        EXPECT_TRUE(torch::allclose(
            m->block(static_cast<int>(l))->input_layernorm(b.attnStream + b.attnDelta), b.ffnStream,
            1e-5, 1e-5));
      }
    }
    const auto r = probes::sublayerContributions(trace, {});
    ASSERT_EQ(r.attnRelative.size(), 3u);
    for (size_t l = 0; l < 3; ++l) {
      auto rows = [](const torch::Tensor& t) { return t.to(torch::kFloat64).flatten(0, 1); };
      const auto& b = trace.blocks[l];
      const auto xs = rows(b.attnStream), h = rows(b.ffnStream);
      const auto a = rows(b.attnDelta), f = rows(b.ffnDelta);
      EXPECT_NEAR(r.attnRelative[l], (a.norm(2, -1) / xs.norm(2, -1)).mean().item<double>(), 1e-5);
      EXPECT_NEAR(r.ffnRelative[l], (f.norm(2, -1) / h.norm(2, -1)).mean().item<double>(), 1e-5);
      EXPECT_NEAR(r.attnCos[l],
                  ((a * xs).sum(-1) / (a.norm(2, -1) * xs.norm(2, -1))).mean().item<double>(),
                  1e-5);
      EXPECT_NEAR(r.ffnCos[l],
                  ((f * h).sum(-1) / (f.norm(2, -1) * h.norm(2, -1))).mean().item<double>(), 1e-5);
    }
    // The probes store them with the forward statistics.
    const auto f = probes::runForwardProbes(m, x, x, {});
    EXPECT_EQ(f.sublayers.attnRelative.size(), 3u);
    ASSERT_TRUE(f.outliers.has_value());
    EXPECT_EQ(f.outliers->rankMe.size(), 3u);
  }
  {  // not detailed: no branches kept, no attention statistics
    torch::NoGradGuard ng;
    model::Decoder m(c.model, c.options, "pre_ln");
    model::ForwardTrace plain;
    probes::tracedForward(m, torch::randint(1, 60, {2, c.model.seqLen}, torch::kInt64), plain);
    EXPECT_FALSE(plain.blocks[0].attnDelta.defined());
    EXPECT_FALSE(plain.blocks[0].attnEntropy.defined());
    EXPECT_TRUE(probes::sublayerContributions(plain, {}).attnRelative.empty());
  }
  model::ForwardTrace bare;  // streams only, as a watched model's hooks give them
  bare.blockInputs = {torch::randn({1, 4, 8}), torch::randn({1, 4, 8})};
  bare.blocks.resize(1);
  EXPECT_TRUE(probes::sublayerContributions(bare, {}).attnRelative.empty());
}

// The DyT saturation probe: the share of each block's DyT inputs with |alpha x| > 2, against
// the share counted here by hand from a traced forward pass; it follows alpha; schemes without
// DyT give none; the forward probes carry it, one value per block in [0, 1].
#include <gtest/gtest.h>

#include <cmath>

#include "probes/depth_probes.h"
#include "probes/saturation_probe.h"
#include "support/model_fixtures.h"

using namespace depthlab;

namespace {

model::Decoder dytModel(const std::string& scheme = "dyt") {
  auto c = test::smallConfig(3);
  torch::manual_seed(11);
  return model::Decoder(c.model, c.options, scheme);
}

double handShare(const model::BlockTrace& bt, double attnAlpha, double ffnAlpha) {
  auto a = (bt.attnNormIn * attnAlpha).abs() > 2.0;
  auto f = (bt.ffnNormIn * ffnAlpha).abs() > 2.0;
  return (a.sum().item<double>() + f.sum().item<double>()) /
         static_cast<double>(a.numel() + f.numel());
}

}  // namespace

TEST(SaturationProbe, CountsTheShareOfDytInputsBeyondTwoOverAlpha) {
  auto m = dytModel();
  torch::NoGradGuard ng;
  {  // alphas that put part of the inputs past the threshold
    m->block(1)->input_layernorm->alpha.fill_(6.0);
    m->block(2)->post_attention_layernorm->alpha.fill_(30.0);
  }
  auto idx = torch::randint(0, 64, {3, 16}, torch::kInt64);
  model::ForwardTrace trace;
  m->forward(idx, model::ForwardOptions{}, &trace);
  const auto share = probes::dytSaturation(m, trace, torch::Tensor());
  ASSERT_EQ(share.size(), 3u);
  for (int l = 0; l < 3; ++l) {
    auto& b = m->block(l);
    const double want = handShare(trace.blocks[static_cast<size_t>(l)],
                                  b->input_layernorm->alpha.item<double>(),
                                  b->post_attention_layernorm->alpha.item<double>());
    EXPECT_NEAR(share[static_cast<size_t>(l)], want, 1e-6) << l;
    EXPECT_GE(share[static_cast<size_t>(l)], 0.0);
    EXPECT_LE(share[static_cast<size_t>(l)], 1.0);
  }
  EXPECT_GT(share[2], share[0]);  // alpha 30 saturates far more than 0.8 / 0.2
  // A larger alpha never saturates less.
  m->block(0)->input_layernorm->alpha.fill_(1000.0);
  model::ForwardTrace again;
  m->forward(idx, model::ForwardOptions{}, &again);
  EXPECT_GT(probes::dytSaturation(m, again, torch::Tensor())[0], 0.4);
}

TEST(SaturationProbe, SchemesWithoutDytHaveNoneAndTheForwardProbesCarryIt) {
  auto c = test::smallConfig(3);
  model::Decoder pre(c.model, c.options, "pre_ln");
  auto idx = torch::randint(0, 64, {2, 16}, torch::kInt64);
  EXPECT_TRUE(probes::runForwardProbes(pre, idx, idx, {}).saturation.empty());
  EXPECT_FALSE(probes::runForwardProbes(pre, idx, idx, {}).saturationFinal.has_value());
  for (const char* scheme : {"dyt", "dyt_lns"}) {
    auto m = dytModel(scheme);
    const auto r = probes::runForwardProbes(m, idx, idx, {});
    ASSERT_EQ(r.saturation.size(), 3u) << scheme;
    for (float s : r.saturation) EXPECT_TRUE(s >= 0.0f && s <= 1.0f) << scheme << " " << s;
  }
}

TEST(SaturationProbe, TheFinalDytCountsTheStreamLeavingTheLastBlock) {
  auto m = dytModel();
  torch::NoGradGuard ng;
  m->norm->alpha.fill_(40.0);
  auto idx = torch::randint(0, 64, {3, 16}, torch::kInt64);
  model::ForwardTrace trace;
  m->forward(idx, model::ForwardOptions{}, &trace);
  const auto& last = trace.blockInputs.back();  // (B, T, C)
  const double want = ((last * 40.0).abs() > 2.0).sum().item<double>() / last.numel();
  const auto got = probes::dytFinalSaturation(m, trace, torch::Tensor());
  ASSERT_TRUE(got.has_value());
  EXPECT_NEAR(*got, want, 1e-9);
  EXPECT_GT(*got, 0.0);
  const auto r = probes::runForwardProbes(m, idx, idx, {});
  ASSERT_TRUE(r.saturationFinal.has_value());
  EXPECT_NEAR(*r.saturationFinal, want, 1e-6);
}

TEST(SaturationProbe, PadsAreLeftOutOfTheShare) {
  auto m = dytModel();
  torch::NoGradGuard ng;
  m->block(0)->input_layernorm->alpha.fill_(8.0);
  auto idx = torch::randint(0, 64, {2, 16}, torch::kInt64);
  model::ForwardTrace trace;
  m->forward(idx, model::ForwardOptions{}, &trace);
  auto real = torch::ones({2, 16}, torch::kBool);
  real.index_put_({1, torch::indexing::Slice(10, 16)}, false);  // the second row's last 6: pads
  const auto& bt = trace.blocks[0];
  auto count = [&](const torch::Tensor& in, double alpha) {
    auto rows = in.index({real});  // (N, C): real tokens only
    return std::make_pair(((rows * alpha).abs() > 2.0).sum().item<double>(),
                          static_cast<double>(rows.numel()));
  };
  const auto a = count(bt.attnNormIn, 8.0);
  const auto f = count(bt.ffnNormIn, m->block(0)->post_attention_layernorm->alpha.item<double>());
  const auto share = probes::dytSaturation(m, trace, real);
  EXPECT_NEAR(share[0], (a.first + f.first) / (a.second + f.second), 1e-6);
  EXPECT_NE(share[0], probes::dytSaturation(m, trace, torch::Tensor())[0]);  // pads matter here
}

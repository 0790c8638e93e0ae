// The decoder under every scheme and option: shapes, gradients, shared initial weights, the
// LNS factor as a constant (not state), the unscaled final norm, and variance growth at init.
#include <gtest/gtest.h>

#include "model/decoder.h"
#include "support/model_fixtures.h"

using namespace depthlab;

namespace {

torch::Tensor randomTokens(const experiment::ExperimentConfig& c, int64_t B) {
  torch::manual_seed(123);
  return torch::randint(0, c.model.vocabSize, {B, c.model.seqLen}, torch::kInt64);
}

model::Decoder build(const experiment::ExperimentConfig& c, const std::string& scheme) {
  torch::manual_seed(static_cast<uint64_t>(c.run.seed));
  return model::Decoder(c.model, c.options, scheme);
}

}  // namespace

TEST(Decoder, EverySchemeAndOptionRunsForwardAndBackward) {
  auto base = test::smallConfig(4);
  std::vector<std::pair<std::string, std::function<void(experiment::SchemeOptions&)>>> options = {
      {"none", [](auto&) {}},
      {"scaled_init", [](auto& o) { o.scaledInit = true; }},
      {"depth_scaled_init", [](auto& o) { o.depthScaledInit = true; }},
      {"skipinit", [](auto& o) { o.skipInit = true; }},
      {"layerscale", [](auto& o) { o.layerScale = true; }},
  };
  for (const auto& scheme : experiment::kSchemes) {
    for (const auto& [optName, apply] : options) {
      SCOPED_TRACE(scheme + " + " + optName);
      auto c = base;
      apply(c.options);
      auto m = build(c, scheme);
      auto idx = randomTokens(c, 2);
      auto logits = m->forward(idx);
      EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{2, c.model.seqLen, c.model.vocabSize}));
      auto loss = m->loss(idx, idx);
      EXPECT_TRUE(std::isfinite(loss.item<double>()));
      loss.backward();
      for (const auto& p : m->named_parameters()) {
        ASSERT_TRUE(p.value().grad().defined()) << p.key();
      }
    }
  }
  for (const auto& placement : experiment::kLnsPlacements) {
    SCOPED_TRACE(placement);
    auto c = base;
    c.options.lnsPlacement = placement;
    auto m = build(c, "lns");
    auto loss = m->loss(randomTokens(c, 2), randomTokens(c, 2));
    loss.backward();
    EXPECT_TRUE(std::isfinite(loss.item<double>()));
  }
  auto c = base;
  c.model.norm = "layernorm";
  EXPECT_TRUE(std::isfinite(build(c, "lns")->loss(randomTokens(c, 2), randomTokens(c, 2))
                                .item<double>()));
}

TEST(Decoder, PreLnAndLnsShareParametersAndInitialWeights) {
  auto c = test::smallConfig(6);
  auto pre = build(c, "pre_ln");
  auto lns = build(c, "lns");
  auto a = pre->named_parameters();
  auto b = lns->named_parameters();
  ASSERT_EQ(a.size(), b.size());
  for (const auto& p : a) {
    ASSERT_TRUE(b.contains(p.key())) << p.key();
    EXPECT_TRUE(torch::equal(p.value(), b[p.key()])) << p.key();
  }
  // The 1/sqrt(l) factor is a constant of the forward pass: no parameter, no buffer.
  EXPECT_EQ(lns->named_buffers().size(), 0u);
  // ... and it changes the function.
  auto idx = randomTokens(c, 2);
  EXPECT_FALSE(torch::allclose(pre->forward(idx), lns->forward(idx)));
}

TEST(Decoder, HuggingFaceParameterNames) {
  auto m = build(test::smallConfig(2), "pre_ln");
  auto names = m->named_parameters();
  for (const char* n : {"embed_tokens.weight", "layers.0.self_attn.q_proj.weight",
                        "layers.1.mlp.down_proj.weight", "layers.1.input_layernorm.weight",
                        "layers.1.post_attention_layernorm.weight", "norm.weight",
                        "lm_head.weight"}) {
    EXPECT_TRUE(names.contains(n)) << n;
  }
}

TEST(Decoder, FinalNormAndEmbeddingsAreNotDepthScaled) {
  // With every branch zeroed each block is the identity, so Pre-LN and LNS must agree
  // exactly: only the final norm and the embedding remain, and neither is scaled.
  auto c = test::smallConfig(5);
  auto pre = build(c, "pre_ln");
  auto lns = build(c, "lns");
  torch::NoGradGuard ng;
  for (auto* m : {&pre, &lns}) {
    for (int l = 0; l < (*m)->nLayers(); ++l) {
      (*m)->block(l)->self_attn->o_proj->weight.zero_();
      (*m)->block(l)->mlp->down_proj->weight.zero_();
    }
  }
  auto idx = randomTokens(c, 2);
  EXPECT_TRUE(torch::allclose(pre->forward(idx), lns->forward(idx), 0, 0));
}

TEST(Decoder, LnsFactorMultipliesTheNormOutputsOfBlockL) {
  auto c = test::smallConfig(4);
  auto pre = build(c, "pre_ln");
  auto lns = build(c, "lns");
  auto idx = randomTokens(c, 2);
  model::ForwardTrace tp, tl;
  torch::NoGradGuard ng;
  pre->forward(idx, {}, &tp);
  lns->forward(idx, {}, &tl);
  // Block 1 (l = 1) has factor 1: both see the same input and produce the same norm output.
  EXPECT_TRUE(torch::allclose(tp.blocks[0].attnNormOut, tl.blocks[0].attnNormOut));
  // For deeper blocks the norm output of LNS equals norm(x_l) / sqrt(l) of its own stream.
  for (int l = 1; l < 4; ++l) {
    auto x = tl.blockInputs[static_cast<size_t>(l)];
    auto expected = lns->block(l)->input_layernorm(x) / std::sqrt(l + 1.0);
    EXPECT_TRUE(torch::allclose(tl.blocks[static_cast<size_t>(l)].attnNormOut, expected, 1e-5, 1e-6))
        << "block " << l + 1;
  }
}

TEST(Decoder, VarianceGrowsWithDepthAtInitLessUnderLns) {
  // The paper's theory (Lemma 3.2 vs 4.1): Pre-LN's residual variance compounds with depth,
  // LNS damps each block's contribution by 1/sqrt(l).
  auto c = test::smallConfig(24);
  c.model.dModel = 64;
  c.model.nHeads = 4;
  c.model.dFF = 128;
  c.model.initStd = 0.1;
  c.model.embedStd = 1.0;
  auto growth = [&](const std::string& scheme) {
    auto m = build(c, scheme);
    model::ForwardTrace t;
    torch::NoGradGuard ng;
    m->forward(randomTokens(c, 4), {}, &t);
    double first = t.blockInputs.front().var().item<double>();
    double last = t.blockInputs.back().var().item<double>();
    for (size_t l = 1; l < t.blockInputs.size(); ++l) {
      EXPECT_GT(t.blockInputs[l].var().item<double>(), 0.99 * t.blockInputs[l - 1].var().item<double>());
    }
    return last / first;
  };
  double pre = growth("pre_ln"), lns = growth("lns");
  EXPECT_GT(pre, 1.5);
  EXPECT_GT(lns, 1.0);
  EXPECT_GT(pre, 1.5 * lns) << "pre_ln growth " << pre << " vs lns " << lns;
}

TEST(Decoder, SkippingABlockWithZeroBranchesLeavesTheLossUnchanged) {
  auto c = test::smallConfig(4);
  auto m = build(c, "lns");
  torch::NoGradGuard ng;
  m->block(2)->self_attn->o_proj->weight.zero_();
  m->block(2)->mlp->down_proj->weight.zero_();
  auto idx = randomTokens(c, 2);
  model::ForwardOptions skip;
  skip.skip = {false, false, true, false};
  EXPECT_TRUE(torch::allclose(m->loss(idx, idx), m->loss(idx, idx, &skip), 0, 1e-7));
  skip.skip = {false, true, false, false};
  EXPECT_FALSE(torch::allclose(m->loss(idx, idx), m->loss(idx, idx, &skip)));
}

TEST(Decoder, SandwichAndLearnableLnsAddTheirParameters) {
  auto c = test::smallConfig(3);
  auto sw = build(c, "sandwich");
  EXPECT_TRUE(sw->named_parameters().contains("layers.0.attn_out_norm.weight"));
  EXPECT_TRUE(sw->named_parameters().contains("layers.2.mlp_out_norm.weight"));
  auto ll = build(c, "lns_learnable");
  EXPECT_EQ(ll->lnsScaleParameters().size(), 3u);
  EXPECT_TRUE(torch::allclose(ll->lnsScaleParameters()[2],
                              torch::full({c.model.dModel}, 1.0 / std::sqrt(3.0))));
  // lns_learnable starts equal to lns.
  auto lns = build(c, "lns");
  torch::NoGradGuard ng;
  for (auto& p : lns->named_parameters()) {
    ll->named_parameters()[p.key()].copy_(p.value());
  }
  auto idx = randomTokens(c, 2);
  EXPECT_TRUE(torch::allclose(ll->forward(idx), lns->forward(idx), 1e-5, 1e-6));
}

// The depth fixes of 2025-26 as trainable schemes (DyT, DyT + LNS, HybridNorm, HybridNorm*,
// OLMo 2's reordered norm) and the QK-norm option: the parameters each one has, and each
// block's output against its formula written out here by hand (docs/schemes.md). The
// independent PyTorch reference is in test_reference_parity.cpp.
#include <gtest/gtest.h>

#include <cmath>

#include "model/decoder.h"
#include "support/model_fixtures.h"

using namespace depthlab;
using namespace depthlab::model;

namespace {

bool hasParameter(torch::nn::Module& m, const std::string& name) {
  for (const auto& p : m.named_parameters()) {
    if (p.key() == name) return true;
  }
  return false;
}

torch::Tensor rms(const torch::Tensor& x, const torch::Tensor& w, double eps) {
  return w * x * torch::rsqrt(x.pow(2).mean(-1, true) + eps);
}

/// Random weights in every norm (ones would hide a missing weight).
void perturbNorms(torch::nn::Module& m) {
  torch::NoGradGuard ng;
  for (auto& p : m.named_parameters()) {
    if (p.key().find("norm") != std::string::npos && p.key().find("alpha") == std::string::npos) {
      p.value().uniform_(0.5, 1.5);
    }
  }
}

/// dst's parameters that src also has, copied from src (by name).
void copyParameters(torch::nn::Module& dst, torch::nn::Module& src) {
  torch::NoGradGuard ng;
  auto from = src.named_parameters();
  for (auto& p : dst.named_parameters()) {
    if (const auto* t = from.find(p.key())) p.value().copy_(*t);
  }
}

struct Built {
  experiment::ExperimentConfig c = test::smallConfig(3);
  Decoder d{nullptr};
  explicit Built(const std::string& scheme, bool qkNorm = false) {
    c.options.qkNorm = qkNorm;
    torch::manual_seed(3);
    d = Decoder(c.model, c.options, scheme);
    perturbNorms(*d);
  }
};

}  // namespace

TEST(DepthFixes2025, DytReplacesEveryNormAndScalesTheEmbeddings) {
  Built b("dyt");
  auto& d = b.d;
  EXPECT_TRUE(hasParameter(*d, "embed_scale"));
  EXPECT_TRUE(hasParameter(*d, "norm.alpha"));
  EXPECT_TRUE(hasParameter(*d, "layers.2.input_layernorm.alpha"));
  EXPECT_TRUE(hasParameter(*d, "layers.2.post_attention_layernorm.alpha"));
  EXPECT_NEAR(d->embed_scale.item<double>(), std::sqrt(32.0), 1e-6);
  // Width 32 <= 4096: the paper's LLaMA-7B setting, 0.8 before attention, 0.2 elsewhere.
  EXPECT_NEAR(d->block(0)->input_layernorm->alpha.item<double>(), 0.8, 1e-7);
  EXPECT_NEAR(d->block(0)->post_attention_layernorm->alpha.item<double>(), 0.2, 1e-7);
  EXPECT_NEAR(d->norm->alpha.item<double>(), 0.2, 1e-7);
  EXPECT_DOUBLE_EQ(dytAlphaByWidth(5120, true), 0.6);
  EXPECT_DOUBLE_EQ(dytAlphaByWidth(8192, false), 0.05);

  // DyT keeps no statistics: y = w * tanh(alpha x), so doubling x is not undone.
  auto& n = d->block(1)->post_attention_layernorm;
  auto x = torch::randn({2, 5, 32});
  torch::NoGradGuard ng;
  auto want = n->weight * torch::tanh(n->alpha * x);
  EXPECT_LT((n(x) - want).abs().max().item<double>(), 1e-6);
  EXPECT_LT((n(x, 0.5) - 0.5 * want).abs().max().item<double>(), 1e-6);
}

TEST(DepthFixes2025, DytAlphasComeFromTheOptionsWhenSet) {
  auto c = test::smallConfig(2);
  c.options.dytAlphaAttn = 1.5;
  c.options.dytAlphaOther = 0.4;
  Decoder d(c.model, c.options, "dyt");
  EXPECT_NEAR(d->block(1)->input_layernorm->alpha.item<double>(), 1.5, 1e-7);
  EXPECT_NEAR(d->norm->alpha.item<double>(), 0.4, 1e-7);
  c.model.norm = "layernorm";  // DyT replacing LayerNorm keeps its shift
  Decoder withBias(c.model, c.options, "dyt");
  EXPECT_TRUE(hasParameter(*withBias, "layers.0.input_layernorm.bias"));
}

TEST(DepthFixes2025, DytLnsScalesBlockLsDytOutputsByOneOverSqrtL) {
  Built plain("dyt"), lns("dyt_lns");
  copyParameters(*lns.d, *plain.d);
  torch::NoGradGuard ng;
  auto x = torch::randn({2, 8, 32});
  const auto& rope = plain.d->rope();
  BlockTrace tp, tl;
  plain.d->block(2)->forward(x, rope, std::nullopt, &tp);
  lns.d->block(2)->forward(x, rope, std::nullopt, &tl);
  EXPECT_LT((tl.attnNormOut - tp.attnNormOut / std::sqrt(3.0)).abs().max().item<double>(), 1e-6);
  // the saturation probe's input: what the DyT before attention read, unscaled
  EXPECT_TRUE(torch::equal(tl.attnNormIn, x));
}

TEST(DepthFixes2025, HybridNormBlockIsQkvNormAttentionThenPostNormFfn) {
  Built b("hybridnorm");
  auto& blk = b.d->block(1);
  EXPECT_FALSE(blk->input_layernorm);
  ASSERT_TRUE(blk->self_attn->v_norm);
  EXPECT_EQ(blk->self_attn->q_norm->weight.size(0), 8);  // per head: D = 32 / 4
  torch::NoGradGuard ng;
  auto x = torch::randn({2, 8, 32});
  const auto& rope = b.d->rope();
  auto h = x + blk->self_attn(x, rope);
  auto g = rms(h, blk->post_attention_layernorm->weight, b.c.model.normEps);
  auto want = g + blk->mlp(g);
  EXPECT_LT((blk->forward(x, rope) - want).abs().max().item<double>(), 1e-5);
  EXPECT_FALSE(blk->defersResidual());
}

TEST(DepthFixes2025, HybridNormStarMakesOnlyTheFirstBlockPreNorm) {
  Built b("hybridnorm_star");
  auto& first = b.d->block(0);
  ASSERT_TRUE(first->input_layernorm);
  ASSERT_TRUE(first->self_attn->v_norm);
  EXPECT_FALSE(b.d->block(1)->input_layernorm);
  torch::NoGradGuard ng;
  auto x = torch::randn({2, 8, 32});
  const auto& rope = b.d->rope();
  const double eps = b.c.model.normEps;
  auto h = x + first->self_attn(rms(x, first->input_layernorm->weight, eps), rope);
  auto want = h + first->mlp(rms(h, first->post_attention_layernorm->weight, eps));
  EXPECT_LT((first->forward(x, rope) - want).abs().max().item<double>(), 1e-5);
}

TEST(DepthFixes2025, Olmo2NormsFollowEachSublayerWithQkNormOverTheProjection) {
  Built b("olmo2");
  auto& blk = b.d->block(2);
  EXPECT_FALSE(blk->input_layernorm);
  EXPECT_FALSE(blk->post_attention_layernorm);
  ASSERT_TRUE(blk->attn_out_norm);
  EXPECT_EQ(blk->self_attn->q_norm->weight.size(0), 32);  // H * D, not per head
  EXPECT_FALSE(blk->self_attn->v_norm);
  torch::NoGradGuard ng;
  auto x = torch::randn({2, 8, 32});
  const auto& rope = b.d->rope();
  const double eps = b.c.model.normEps;
  auto h = x + rms(blk->self_attn(x, rope), blk->attn_out_norm->weight, eps);
  auto want = h + rms(blk->mlp(h), blk->mlp_out_norm->weight, eps);
  EXPECT_LT((blk->forward(x, rope) - want).abs().max().item<double>(), 1e-5);
}

TEST(DepthFixes2025, QkNormOptionAddsPerHeadNormsToAnyScheme) {
  for (const char* scheme : {"pre_ln", "lns", "post_ln", "dyt"}) {
    Built b(scheme, /*qkNorm=*/true);
    ASSERT_TRUE(b.d->block(0)->self_attn->q_norm) << scheme;
    EXPECT_EQ(b.d->block(0)->self_attn->k_norm->weight.size(0), 8) << scheme;
    EXPECT_FALSE(b.d->block(0)->self_attn->v_norm) << scheme;
  }
  Built plain("pre_ln");
  EXPECT_FALSE(plain.d->block(0)->self_attn->q_norm);
  // The normalised queries change the output: the option is not a no-op.
  Built withNorm("pre_ln", true);
  copyParameters(*withNorm.d, *plain.d);
  torch::NoGradGuard ng;
  auto idx = torch::randint(0, 64, {2, 16}, torch::kInt64);
  EXPECT_GT((withNorm.d->forward(idx) - plain.d->forward(idx)).abs().max().item<double>(), 1e-4);
}

TEST(DepthFixes2025, TracedAndDeferredForwardsAgreeAndEverySchemeLearns) {
  for (const char* scheme : {"dyt", "dyt_lns", "hybridnorm", "hybridnorm_star", "olmo2"}) {
    Built b(scheme);
    auto idx = torch::randint(0, 64, {4, 16}, torch::kInt64);
    auto targets = torch::roll(idx, -1, 1);
    {
      torch::NoGradGuard ng;
      ForwardTrace trace;
      auto traced = b.d->forward(idx, ForwardOptions{}, &trace);  // the plain path
      EXPECT_LT((traced - b.d->forward(idx)).abs().max().item<double>(), 1e-5) << scheme;
    }
    torch::optim::Adam opt(b.d->parameters(), torch::optim::AdamOptions(3e-3));
    double first = 0, last = 0;
    for (int step = 0; step < 25; ++step) {
      opt.zero_grad();
      auto loss = b.d->loss(idx, targets);
      loss.backward();
      opt.step();
      (step == 0 ? first : last) = loss.item<double>();
    }
    EXPECT_TRUE(std::isfinite(last)) << scheme;
    EXPECT_LT(last, first - 0.3) << scheme;
  }
}

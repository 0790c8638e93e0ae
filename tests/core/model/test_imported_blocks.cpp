// What GPT-2 and GPT-NeoX add to the one decoder, each against its formula: a partial rope
// (the first R dims of a head rotate, the rest pass) and none at all, the parallel block
// x + A(N1(x)) + F(N2(x)), the ungated MLP with biases and exact / tanh gelu, learned absolute
// positions; the deferred and traced paths agree on such a model, and DepthLab's own defaults
// add none of it (no parameters, the fused paths kept).
#include <gtest/gtest.h>

#include "model/decoder.h"
#include "support/model_fixtures.h"

using namespace depthlab;
namespace F = torch::nn::functional;

namespace {

double maxDiff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

/// A small GPT-NeoX-like shape: LayerNorm, biases, ungated exact-gelu MLP, a quarter rotary.
model::ModelConfig neoxLike(bool parallel) {
  model::ModelConfig m;
  m.vocabSize = 50;
  m.dModel = 32;
  m.nLayers = 3;
  m.nHeads = 2;
  m.dFF = 48;
  m.seqLen = 12;
  m.norm = "layernorm";
  m.normEps = 1e-5;
  m.qkvBias = m.outBias = m.mlpBias = true;
  m.gatedMlp = false;
  m.activation = "gelu";
  m.rotaryFraction = 0.25;  // 4 of 16 dims
  m.parallelResidual = parallel;
  return m;
}

void randomize(torch::nn::Module& module) {
  torch::NoGradGuard ng;
  for (auto& p : module.parameters()) p.uniform_(-0.3, 0.3);
}

}  // namespace

TEST(ImportedBlocks, PartialRopeRotatesTheFirstDimsAndPassesTheRest) {
  torch::manual_seed(1);
  auto x = torch::randn({2, 3, 10, 16});  // (B, H, T, D)
  model::Rope partial(16, 10, 500.0, model::RopeScaling{}, 4);
  model::Rope four(4, 10, 500.0);
  EXPECT_FALSE(partial.rotatesWholeHead());
  auto y = partial.apply(x);
  EXPECT_TRUE(torch::equal(y.slice(-1, 0, 4), four.apply(x.slice(-1, 0, 4))));
  EXPECT_TRUE(torch::equal(y.slice(-1, 4, 16), x.slice(-1, 4, 16)));
  EXPECT_GT(maxDiff(y.slice(-1, 0, 4), x.slice(-1, 0, 4)), 1e-2);  // it does rotate
  model::Rope none(16, 10, 500.0, model::RopeScaling{}, 0);        // GPT-2: no RoPE
  EXPECT_TRUE(torch::equal(none.apply(x), x));
  model::Rope whole(16, 10, 500.0, model::RopeScaling{}, 16);  // DepthLab's own, bit for bit
  EXPECT_TRUE(whole.rotatesWholeHead());
  EXPECT_TRUE(torch::equal(whole.apply(x), model::Rope(16, 10, 500.0).apply(x)));
}

TEST(ImportedBlocks, ParallelBlockIsXPlusBothBranchesOfX) {
  torch::manual_seed(2);
  const auto m = neoxLike(true);
  auto plans = model::planBlocks(m, {}, "pre_ln");
  ASSERT_TRUE(plans[0].parallel);
  model::Block b(plans[0], m);
  randomize(*b);
  model::Rope rope(16, 12, 10000.0, model::RopeScaling{}, m.rotaryDims());
  auto x = torch::randn({2, 12, 32});
  torch::NoGradGuard ng;
  // The ungated MLP by hand: down(gelu(up(x) + b) + b).
  auto& f = b->mlp;
  EXPECT_TRUE(f->gate_proj.is_empty());
  auto n2 = F::layer_norm(x, F::LayerNormFuncOptions({32})
                                 .weight(b->post_attention_layernorm->weight)
                                 .bias(b->post_attention_layernorm->bias)
                                 .eps(1e-5));
  auto mlp = F::linear(F::gelu(F::linear(n2, f->up_proj->weight, f->up_proj->bias)),
                       f->down_proj->weight, f->down_proj->bias);
  EXPECT_LT(maxDiff(f(n2), mlp), 1e-6);
  auto expected = x + b->self_attn(b->input_layernorm(x), rope) + mlp;
  EXPECT_LT(maxDiff(b->forward(x, rope), expected), 1e-5);
  EXPECT_FALSE(b->defersResidual());
  // The sequential form of the same weights differs (the test above is not vacuous).
  model::Block seq(model::planBlocks(neoxLike(false), {}, "pre_ln")[0], neoxLike(false));
  {
    auto from = b->named_parameters();
    for (auto& p : seq->named_parameters()) p.value().copy_(from[p.key()]);
  }
  EXPECT_GT(maxDiff(seq->forward(x, rope), expected), 1e-3);
  EXPECT_TRUE(seq->defersResidual());
}

TEST(ImportedBlocks, ParallelBlocksArePreLnOnly) {
  auto m = neoxLike(true);
  EXPECT_THROW(model::planBlocks(m, {}, "post_ln"), util::ConfigError);
  EXPECT_THROW(model::planBlocks(m, {}, "deepnorm"), util::ConfigError);
  EXPECT_NO_THROW(model::planBlocks(m, {}, "lns"));
}

TEST(ImportedBlocks, LearnedPositionsAndEveryFeatureTrainAndTraceAsTheyRun) {
  for (bool parallel : {true, false}) {
    SCOPED_TRACE(parallel ? "parallel" : "sequential");
    torch::manual_seed(3);
    auto m = neoxLike(parallel);
    m.learnedPositions = 12;
    m.activation = "gelu_tanh";
    model::Decoder d(m, model::SchemeOptions{}, std::string("pre_ln"));
    randomize(*d);
    auto idx = torch::randint(0, 50, {2, 12}, torch::kInt64);
    auto embedded = d->embed(idx);
    EXPECT_LT(maxDiff(embedded, d->embed_tokens(idx) + d->embed_positions->weight), 1e-6);
    model::ForwardTrace trace;
    auto traced = d->forward(idx, {}, &trace);
    EXPECT_LT(maxDiff(d->forward(idx), traced), 1e-5);  // the deferred path where it applies
    auto loss = d->loss(idx, idx);
    loss.backward();
    for (const auto& p : d->named_parameters()) {
      ASSERT_TRUE(p.value().grad().defined()) << p.key();
    }
    EXPECT_TRUE(d->embed_positions->weight.grad().abs().sum().item<double>() > 0);
  }
  auto m = neoxLike(true);
  m.learnedPositions = 8;
  model::Decoder d(m, model::SchemeOptions{}, std::string("pre_ln"));
  auto idx = torch::zeros({1, 9}, torch::kInt64);
  try {
    d->forward(idx);
    FAIL() << "a sequence past the learned positions ran";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("longer than the model's 8 learned positions"),
              std::string::npos);
  }
}

TEST(ImportedBlocks, DepthLabsOwnDefaultsAddNothing) {
  const auto c = test::smallConfig(4);
  model::Decoder d(c.model, c.options, "pre_ln");
  EXPECT_TRUE(d->embed_positions.is_empty());
  EXPECT_TRUE(d->rope(0).rotatesWholeHead());
  for (int l = 0; l < d->nLayers(); ++l) {
    EXPECT_FALSE(d->plans()[static_cast<size_t>(l)].parallel);
    EXPECT_TRUE(d->block(l)->defersResidual());
    EXPECT_FALSE(d->block(l)->self_attn->o_proj->bias.defined());
    EXPECT_FALSE(d->block(l)->mlp->gate_proj->bias.defined());
    EXPECT_FALSE(d->block(l)->mlp->down_proj->bias.defined());
  }
  for (const auto& p : d->named_parameters()) {
    EXPECT_EQ(p.key().find("bias"), std::string::npos) << p.key();  // rmsnorm, no q/k/v biases
  }
}

// The depth probes on real (small) models: shapes, agreement with the per-layer formulas,
// pruning (prefix-cached equals full recomputation; LNS index option), no side effects, and
// the CPU kernels against the float64 tensor path.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/cpu_kernels.h"
#include "probes/depth_probes.h"
#include "probes/probe_math.h"
#include "support/model_fixtures.h"
#include "train/thread_share.h"

using namespace depthlab;

namespace {
model::Decoder build(const experiment::ExperimentConfig& c, const std::string& scheme) {
  torch::manual_seed(5);
  return model::Decoder(c.model, c.options, scheme);
}
torch::Tensor tokensFor(const experiment::ExperimentConfig& c) {
  torch::manual_seed(9);
  return torch::randint(0, c.model.vocabSize, {3, c.model.seqLen}, torch::kInt64);
}
}  // namespace

TEST(DepthProbes, ShapesAndAgreementWithTheFormulas) {
  auto c = test::smallConfig(5);
  c.model.embedStd = 1.0;
  auto m = build(c, "lns");
  auto x = tokensFor(c);
  auto r = probes::runForwardProbes(m, x, x, {false, true});
  const size_t L = 5;
  for (const auto* v : {&r.variance, &r.normVarAttn, &r.normVarFfn, &r.angularAdjacent,
                        &r.blockInfluence, &r.effectiveness}) {
    EXPECT_EQ(v->size(), L);
  }
  ASSERT_EQ(r.angularMatrix.size(), L * L);
  model::ForwardTrace t;
  {
    torch::NoGradGuard ng;
    m->forward(x, {}, &t);
  }
  for (size_t l = 0; l < L; ++l) {
    EXPECT_NEAR(r.variance[l], probes::elementVariance(t.blockInputs[l + 1]), 1e-5 * r.variance[l]);
    EXPECT_NEAR(r.effectiveness[l], probes::layerEffectiveness(t.blockInputs[l], t.blockInputs[l + 1]), 1e-5);
    auto a = probes::tokens(t.blockInputs[l], false), b = probes::tokens(t.blockInputs[l + 1], false);
    EXPECT_NEAR(r.angularAdjacent[l], probes::angularDistance(a, b).mean().item<float>(), 1e-5);
    EXPECT_NEAR(r.blockInfluence[l], probes::blockInfluence(a, b), 1e-5);
    EXPECT_NEAR(r.normVarAttn[l], probes::elementVariance(t.blocks[l].attnNormOut), 1e-5);
    EXPECT_FLOAT_EQ(r.angularMatrix[l * L + 0], r.angularAdjacent[l]);  // n = 1 column
    for (size_t n = 1; n <= L; ++n) {
      const float v = r.angularMatrix[l * L + (n - 1)];
      if (l + n > L) EXPECT_TRUE(std::isnan(v)) << l << "," << n;  // masked
      else EXPECT_TRUE(v >= 0 && v <= 1) << l << "," << n;
    }
  }
  auto lastOnly = probes::runForwardProbes(m, x, x, {true, false});
  EXPECT_TRUE(lastOnly.angularMatrix.empty());
  EXPECT_NE(lastOnly.angularAdjacent, r.angularAdjacent);
}

TEST(DepthProbes, PostLnHasNoPreNormOutputs) {
  auto c = test::smallConfig(3);
  auto m = build(c, "post_ln");
  auto x = tokensFor(c);
  auto r = probes::runForwardProbes(m, x, x, {});
  for (float v : r.normVarAttn) EXPECT_TRUE(std::isnan(v));
}

TEST(DepthProbes, EveryBlockPruningEntryEqualsThatRunEvaluatedAlone) {
  // Every (l, n) entry of the sweep, computed from the prefix cache with the evaluations dealt
  // over 1 and 2 threads, is that run's own loss, including n = L - l (only the final norm and
  // head run).
  auto c = test::smallConfig(5);
  c.model.embedStd = 1.0;
  const int threads = torch::get_num_threads();
  for (const char* scheme : {"pre_ln", "lns"}) {
    SCOPED_TRACE(scheme);
    auto m = build(c, scheme);
    auto x = tokensFor(c);
    const double full = probes::lossWithout(m, x, x, std::vector<bool>(5, false), false);
    for (int t : {1, 2}) {
      torch::set_num_threads(t);
      auto block = probes::blockPruning(m, x, x, {}, false);
      for (int l = 0; l < 5; ++l) {
        for (int n = 1; l + n <= 5; ++n) {
          std::vector<bool> skip(5, false);
          for (int k = l; k < l + n; ++k) skip[k] = true;
          EXPECT_NEAR(block.delta[l * 5 + (n - 1)], probes::lossWithout(m, x, x, skip, false) - full,
                      1e-5)
              << "l " << l << " n " << n << " threads " << t;
        }
      }
    }
  }
  torch::set_num_threads(threads);
}

TEST(DepthProbes, PruningErrorBarsAreTheStandardErrorOfThePerSequenceDeltas) {
  // Each sequence evaluated alone gives its own delta; the sweeps' delta is their mean and
  // the error their sample standard deviation / sqrt(B).
  auto c = test::smallConfig(4);
  c.model.embedStd = 1.0;
  auto m = build(c, "lns");
  auto x = tokensFor(c);  // (3, T)
  const int B = 3, L = 4;
  auto block = probes::blockPruning(m, x, x, {}, false);
  auto single = probes::singleLayerPruning(m, x, x, false);
  ASSERT_EQ(block.standardError.size(), static_cast<size_t>(L * L));
  ASSERT_EQ(single.standardError.size(), static_cast<size_t>(L));
  for (int l = 0; l < L; ++l) {
    for (int n = 1; l + n <= L; ++n) {
      std::vector<bool> skip(L, false);
      for (int k = l; k < l + n; ++k) skip[k] = true;
      std::vector<double> pruned, full;
      for (int b = 0; b < B; ++b) {
        auto row = x.slice(0, b, b + 1);
        pruned.push_back(probes::lossWithout(m, row, row, skip, false));
        full.push_back(probes::lossWithout(m, row, row, std::vector<bool>(L, false), false));
      }
      const auto want = probes::pairedDifference(pruned.data(), full.data(), B);
      const size_t at = static_cast<size_t>(l * L + (n - 1));
      EXPECT_NEAR(block.delta[at], want.mean, 1e-5) << l << "," << n;
      EXPECT_NEAR(block.standardError[at], want.standardError, 1e-5) << l << "," << n;
      EXPECT_GT(block.standardError[at], 0) << l << "," << n;  // random tokens differ
      if (n == 1) {
        EXPECT_NEAR(single.delta[static_cast<size_t>(l)], want.mean, 1e-5);
        EXPECT_NEAR(single.standardError[static_cast<size_t>(l)], want.standardError, 1e-5);
      }
    }
  }
  EXPECT_TRUE(std::isnan(block.standardError[3 * L + 1]));  // l + n > L
  // One sequence: a delta, no error bar.
  auto row = x.slice(0, 0, 1);
  auto alone = probes::singleLayerPruning(m, row, row, false);
  for (float e : alone.standardError) EXPECT_TRUE(std::isnan(e));
}

TEST(DepthProbes, PrefixCachedPruningEqualsFullRecomputation) {
  auto c = test::smallConfig(4);
  c.model.embedStd = 1.0;
  for (const char* scheme : {"pre_ln", "lns", "post_ln"}) {
    SCOPED_TRACE(scheme);
    auto m = build(c, scheme);
    auto x = tokensFor(c);
    for (bool renumber : {false, true}) {
      auto single = probes::singleLayerPruning(m, x, x, renumber).delta;
      const double full = probes::lossWithout(m, x, x, std::vector<bool>(4, false), false);
      for (int l = 0; l < 4; ++l) {
        std::vector<bool> skip(4, false);
        skip[l] = true;
        EXPECT_NEAR(single[l], probes::lossWithout(m, x, x, skip, renumber) - full, 1e-5);
      }
      auto block = probes::blockPruning(m, x, x, {}, renumber);
      std::vector<bool> skip = {false, true, true, false};  // l = 1, n = 2
      EXPECT_NEAR(block.delta[1 * 4 + 1], probes::lossWithout(m, x, x, skip, renumber) - full, 1e-5);
      EXPECT_NEAR(block.delta[0 * 4 + 0], single[0], 1e-6);
      EXPECT_TRUE(std::isnan(block.delta[3 * 4 + 1]));  // l + n > L
      EXPECT_FALSE(std::isnan(block.delta[0 * 4 + 3]));  // everything removed
    }
  }
}

TEST(DepthProbes, PruningAZeroBranchBlockCostsNothing) {
  auto c = test::smallConfig(4);
  auto m = build(c, "lns");
  {
    torch::NoGradGuard ng;
    m->block(2)->self_attn->o_proj->weight.zero_();
    m->block(2)->mlp->down_proj->weight.zero_();
  }
  auto x = tokensFor(c);
  auto delta = probes::singleLayerPruning(m, x, x, false).delta;
  EXPECT_NEAR(delta[2], 0.0, 1e-6);
  EXPECT_GT(std::abs(delta[0]), 1e-5);
}

TEST(DepthProbes, LnsPruningKeepsOriginalFactorsUnlessRenumbered) {
  auto c = test::smallConfig(4);
  c.model.embedStd = 1.0;
  auto m = build(c, "lns");
  auto x = tokensFor(c);
  std::vector<bool> skip = {true, false, false, false};  // remove block 1
  torch::NoGradGuard ng;
  // Original factors: blocks 2, 3, 4 keep 1/sqrt(2), 1/sqrt(3), 1/sqrt(4).
  model::ForwardOptions keep;
  keep.skip = skip;
  const double kept = probes::lossWithout(m, x, x, skip, false);
  EXPECT_NEAR(kept, torch::nn::functional::cross_entropy(m->forward(x, keep).reshape({-1, 64}),
                                                         x.reshape({-1})).item<double>(), 1e-6);
  // Renumbered: they become blocks 1, 2, 3.
  model::ForwardOptions renum;
  renum.skip = skip;
  renum.scaleOverride = {1.0, 1.0, 1.0 / std::sqrt(2.0), 1.0 / std::sqrt(3.0)};
  const double renumbered = probes::lossWithout(m, x, x, skip, true);
  EXPECT_NEAR(renumbered, torch::nn::functional::cross_entropy(m->forward(x, renum).reshape({-1, 64}),
                                                               x.reshape({-1})).item<double>(), 1e-6);
  EXPECT_GT(std::abs(kept - renumbered), 1e-6);
  // Pre-LN has no factor to renumber.
  auto pre = build(c, "pre_ln");
  EXPECT_DOUBLE_EQ(probes::lossWithout(pre, x, x, skip, false), probes::lossWithout(pre, x, x, skip, true));
}

TEST(DepthProbes, LeaveNoTraceOnTheModel) {
  auto c = test::smallConfig(3);
  auto m = build(c, "lns");
  m->train();
  auto x = tokensFor(c);
  auto rngBefore = torch::randn({1});  // consume one draw; compare the next draws below
  torch::manual_seed(77);
  probes::runForwardProbes(m, x, x, {false, true});
  probes::singleLayerPruning(m, x, x, false);
  probes::blockPruning(m, x, x, {}, true);
  auto jac = probes::jacobianToIdentity(m, x, 2, 3);
  auto after = torch::randn({4});
  torch::manual_seed(77);
  EXPECT_TRUE(torch::equal(after, torch::randn({4})));  // no global RNG draw
  EXPECT_TRUE(m->is_training());
  for (const auto& p : m->parameters()) EXPECT_FALSE(p.grad().defined());
  ASSERT_EQ(jac.size(), 3u);
  for (float v : jac) EXPECT_TRUE(std::isfinite(v) && v >= 0);
}

TEST(DepthProbes, JacobianOfAnIdentityBlockIsZero) {
  auto c = test::smallConfig(2);
  auto m = build(c, "pre_ln");
  {
    torch::NoGradGuard ng;
    for (int l = 0; l < 2; ++l) {
      m->block(l)->self_attn->o_proj->weight.zero_();
      m->block(l)->mlp->down_proj->weight.zero_();
    }
  }
  auto jac = probes::jacobianToIdentity(m, tokensFor(c), 3, 1);
  for (float v : jac) EXPECT_NEAR(v, 0.0f, 1e-6);
}

// The Jacobian probe differentiates each block with the block's own rotary tables: layers
// rotated with a local base (Gemma 3) give what a model rotating every layer with that base
// gives, and not what the global base gives.
TEST(DepthProbes, JacobianUsesEachBlocksOwnRope) {
  auto local = test::smallConfig(3);
  local.model.ropeBase = 10000;
  local.model.localRopeBase = 50;
  local.model.localRopeLayers = {true, true, false};
  local.model.initStd = 0.3;  // attention sharp enough for the rotation to matter
  auto allLocal = local;  // every block rotated with base 50
  allLocal.model.ropeBase = 50;
  allLocal.model.localRopeBase = 0;
  allLocal.model.localRopeLayers.clear();
  auto allGlobal = allLocal;
  allGlobal.model.ropeBase = 10000;
  auto a = build(local, "pre_ln"), b = build(allLocal, "pre_ln"), g = build(allGlobal, "pre_ln");
  const auto x = tokensFor(local);
  const auto ja = probes::jacobianToIdentity(a, x, 2, 3), jb = probes::jacobianToIdentity(b, x, 2, 3),
             jg = probes::jacobianToIdentity(g, x, 2, 3);
  ASSERT_EQ(ja.size(), 3u);
  for (int l : {0, 1}) EXPECT_NEAR(ja[l], jb[l], 1e-6 * std::abs(jb[l])) << "local layer " << l;
  EXPECT_GT(std::abs(ja[0] - jg[0]), 1e-4 * std::abs(jg[0]));  // the base matters here
}

TEST(DepthProbes, KernelAndTensorPathsAgree) {
  // CPU runs take the one-pass kernels, GPU runs the float64 tensor path: same numbers.
  auto c = test::smallConfig(6);
  c.model.embedStd = 1.0;
  for (const char* scheme : {"pre_ln", "lns", "post_ln", "sandwich"}) {
    for (bool lastOnly : {false, true}) {
      SCOPED_TRACE(std::string(scheme) + (lastOnly ? " last token" : " all tokens"));
      auto m = build(c, scheme);
      auto x = tokensFor(c);
      {  // a zero residual stream for one block's input exercises the zero-vector rules
        torch::NoGradGuard ng;
        m->embed_tokens->weight[x[0][0].item<int64_t>()].zero_();
      }
      auto viaKernels = probes::runForwardProbes(m, x, x, {lastOnly, true});
      kernels::setFusedKernelsEnabled(false);
      auto viaTensors = probes::runForwardProbes(m, x, x, {lastOnly, true});
      kernels::setFusedKernelsEnabled(true);
      auto expectSame = [](const std::vector<float>& a, const std::vector<float>& b,
                           const char* what) {
        ASSERT_EQ(a.size(), b.size()) << what;
        for (size_t i = 0; i < a.size(); ++i) {
          if (std::isnan(b[i])) {
            EXPECT_TRUE(std::isnan(a[i])) << what << " " << i;
          } else {
            EXPECT_NEAR(a[i], b[i], 1e-5 * std::max(1.0f, std::abs(b[i]))) << what << " " << i;
          }
        }
      };
      expectSame(viaKernels.variance, viaTensors.variance, "variance");
      expectSame(viaKernels.effectiveness, viaTensors.effectiveness, "effectiveness");
      expectSame(viaKernels.angularAdjacent, viaTensors.angularAdjacent, "angular");
      expectSame(viaKernels.blockInfluence, viaTensors.blockInfluence, "block influence");
      expectSame(viaKernels.normVarAttn, viaTensors.normVarAttn, "attn norm variance");
      expectSame(viaKernels.normVarFfn, viaTensors.normVarFfn, "ffn norm variance");
      expectSame(viaKernels.angularMatrix, viaTensors.angularMatrix, "angular matrix");
      EXPECT_NEAR(viaKernels.probeLoss, viaTensors.probeLoss, 1e-5);
    }
  }
}

TEST(DepthProbes, PruningSweepsSharedOutOverThreadsEqualTheSequentialOnes) {
  auto c = test::smallConfig(5);
  c.model.embedStd = 1.0;
  for (bool renumber : {false, true}) {
    SCOPED_TRACE(renumber);
    auto m = build(c, "lns");
    auto x = tokensFor(c);
    std::vector<float> single1, block1, single3, block3;
    std::vector<std::pair<int, int>> heard;
    {
      train::IntraOpThreads one(1);
      single1 = probes::singleLayerPruning(m, x, x, renumber).delta;
      block1 = probes::blockPruning(m, x, x, {}, renumber).delta;
    }
    {
      train::IntraOpThreads three(3);  // more workers than this machine may have cores
      single3 = probes::singleLayerPruning(m, x, x, renumber).delta;
      block3 = probes::blockPruning(m, x, x, {}, renumber, [&](int done, int total) {
                 heard.emplace_back(done, total);
               }).delta;
      EXPECT_EQ(torch::get_num_threads(), 3);  // the caller's count is back
    }
    // Each evaluation runs single-threaded either way: the same arithmetic, the same bits.
    ASSERT_EQ(single1.size(), single3.size());
    for (size_t i = 0; i < single1.size(); ++i) EXPECT_EQ(single1[i], single3[i]) << i;
    ASSERT_EQ(block1.size(), block3.size());
    for (size_t i = 0; i < block1.size(); ++i) {
      if (std::isnan(block1[i])) EXPECT_TRUE(std::isnan(block3[i])) << i;
      else EXPECT_EQ(block1[i], block3[i]) << i;
    }
    ASSERT_FALSE(heard.empty());
    EXPECT_EQ(heard.back(), std::make_pair(15, 15));  // 5 * 6 / 2 evaluations
    for (size_t i = 1; i < heard.size(); ++i) EXPECT_GE(heard[i].first, heard[i - 1].first);
  }
}

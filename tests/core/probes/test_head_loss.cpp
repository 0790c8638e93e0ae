// The output head's loss in vocabulary chunks (probes/head_loss.h): the same per-token and
// per-sequence losses as cross_entropy on the whole logits (float32 and bf16 heads, uneven and
// single chunks, pads, large logits), the blocks-only pass equal to the decoder's own, and the
// pruning sweeps giving the same deltas through it as through the decoder's logits.
#include <gtest/gtest.h>

#include "probes/depth_probes.h"
#include "probes/head_loss.h"
#include "probes/probe_tokens.h"
#include "support/model_fixtures.h"

using namespace depthlab;

namespace {

double worstRelative(const torch::Tensor& a, const torch::Tensor& b) {
  return ((a - b).abs() / b.abs().clamp_min(1e-6)).max().item<double>();
}

// A model whose vocabulary spans two chunks and a bit: the probes take the chunked path.
experiment::ExperimentConfig bigVocabConfig(bool tied) {
  auto c = test::smallConfig(4);
  c.model.vocabSize = static_cast<int>(probes::kHeadChunkRows) * 2 + 77;
  c.model.tieEmbeddings = tied;
  c.model.embedStd = 1.0;
  return c;
}

}  // namespace

TEST(HeadLoss, ChunkedTokenLossesEqualCrossEntropy) {
  torch::manual_seed(3);
  const int64_t N = 37, C = 24, V = 1000;
  for (double scale : {1.0, 30.0}) {  // 30: logits in the hundreds, where a naive exp overflows
    auto h = torch::randn({N, C}) * scale;
    auto w = torch::randn({V, C}) * 0.5;
    auto t = torch::randint(0, V, {N}, torch::kInt64);
    t.index_put_({torch::indexing::Slice(0, 5)}, -100);  // pads
    t[7] = 0;
    t[8] = V - 1;  // the first and last rows of the head
    namespace F = torch::nn::functional;
    auto want = F::cross_entropy(torch::linear(h, w), t,
                                 F::CrossEntropyFuncOptions().reduction(torch::kNone));
    for (int64_t chunk : {int64_t{64}, int64_t{333}, V, int64_t{5000}}) {
      auto got = probes::chunkedTokenLosses(h, w, t, chunk);
      ASSERT_EQ(got.sizes(), want.sizes());
      EXPECT_EQ(got.slice(0, 0, 5).abs().sum().item<double>(), 0.0) << "pads give 0";
      EXPECT_LT(worstRelative(got.slice(0, 5), want.slice(0, 5)), 1e-5) << scale << " " << chunk;
    }
    // A bf16 head: widened chunk by chunk, the same as widening it whole.
    auto wb = w.to(torch::kBFloat16);
    auto wantB = F::cross_entropy(torch::linear(h, wb.to(torch::kFloat32)), t,
                                  F::CrossEntropyFuncOptions().reduction(torch::kNone));
    auto gotB = probes::chunkedTokenLosses(h, wb, t, 128);
    EXPECT_LT(worstRelative(gotB.slice(0, 5), wantB.slice(0, 5)), 1e-5);
    // Gemma 2's final soft-cap, applied chunk by chunk.
    auto capped = torch::tanh(torch::linear(h, w) / 3.0) * 3.0;
    auto wantCap = F::cross_entropy(capped, t, F::CrossEntropyFuncOptions().reduction(torch::kNone));
    auto gotCap = probes::chunkedTokenLosses(h, w, t, 64, 3.0);
    EXPECT_LT(worstRelative(gotCap.slice(0, 5), wantCap.slice(0, 5)), 1e-5);
  }
}

TEST(HeadLoss, ChunkedSequenceLossesEqualSequenceLosses) {
  torch::manual_seed(4);
  const int64_t B = 3, T = 11, C = 16, V = 700;
  auto h = torch::randn({B, T, C});
  auto w = torch::randn({V, C});
  auto t = torch::randint(0, V, {B, T}, torch::kInt64);
  auto whole = probes::sequenceLosses(torch::linear(h, w), t, {});
  EXPECT_LT(worstRelative(probes::chunkedSequenceLosses(h, w, t, {}, 100), whole), 1e-5);
  t.index_put_({1, torch::indexing::Slice(6, T)}, -100);  // a document ending early
  const auto counted = probes::countedTargets(t);
  ASSERT_TRUE(counted.defined());
  auto padded = probes::sequenceLosses(torch::linear(h, w), t, counted);
  EXPECT_LT(worstRelative(probes::chunkedSequenceLosses(h, w, t, counted, 100), padded), 1e-5);
}

TEST(HeadLoss, HiddenFromThenTheHeadIsTheDecodersForwardFrom) {
  for (bool tied : {false, true}) {
    for (const char* scheme : {"pre_ln", "lns"}) {
      auto c = bigVocabConfig(tied);
      torch::manual_seed(5);
      model::Decoder m(c.model, c.options, scheme);
      m->eval();
      torch::NoGradGuard ng;
      auto x = torch::randint(0, c.model.vocabSize, {2, 16}, torch::kInt64);
      model::ForwardTrace trace;
      m->forward(x, {}, &trace);
      model::ForwardOptions opts;
      opts.skip = {false, true, false, false};
      opts.scaleOverride = {1.0, 1.0, 0.5, 0.25};
      auto want = m->forwardFrom(trace.blockInputs[1], 1, opts);  // (B, T, V)
      auto h = probes::hiddenFrom(m, trace.blockInputs[1], 1, opts);
      auto got = torch::linear(h, probes::headWeight(m));
      EXPECT_LT((got - want).abs().max().item<double>(), 1e-4 * want.abs().max().item<double>())
          << scheme << (tied ? " tied" : " untied");
    }
  }
}

TEST(HeadLoss, PruningThroughTheChunkedHeadGivesTheDecodersDeltas) {
  for (bool tied : {false, true}) {
    auto c = bigVocabConfig(tied);
    torch::manual_seed(6);
    model::Decoder m(c.model, c.options, "lns");
    auto x = torch::randint(0, c.model.vocabSize, {3, 16}, torch::kInt64);
    auto y = torch::randint(0, c.model.vocabSize, {3, 16}, torch::kInt64);
    const auto sweep = probes::singleLayerPruning(m, x, y, false);
    const auto blocks = probes::blockPruning(m, x, y, {}, true);
    torch::NoGradGuard ng;
    m->eval();
    const double full = probes::lossOf(m->forward(x), y);
    for (int l = 0; l < 4; ++l) {
      std::vector<bool> skip(4, false);
      skip[static_cast<size_t>(l)] = true;
      const double want = probes::lossWithout(m, x, y, skip, false) - full;
      EXPECT_NEAR(sweep.delta[static_cast<size_t>(l)], want, 2e-5 * std::max(1.0, std::abs(want)))
          << "block " << l;
    }
    std::vector<bool> skip = {false, true, true, false};  // (l, n) = (1, 2), renumbered
    const double want = probes::lossWithout(m, x, y, skip, true) - full;
    EXPECT_NEAR(blocks.delta[1 * 4 + 1], want, 2e-5 * std::max(1.0, std::abs(want)));
  }
}

TEST(HeadLoss, ChunkedPathOnlyWhenItAgreesWithTheDecoder) {
  torch::NoGradGuard ng;
  auto small = test::smallConfig(2);  // vocabulary under one chunk: the logits as before
  torch::manual_seed(7);
  model::Decoder ms(small.model, small.options, "pre_ln");
  ms->eval();
  auto xs = torch::randint(0, small.model.vocabSize, {2, 8}, torch::kInt64);
  model::ForwardTrace ts;
  auto lossesS = probes::sequenceLosses(ms->forward(xs, {}, &ts), xs, {});
  EXPECT_FALSE(probes::chunkedHeadFor(ms, ts.blockInputs[0], xs, {}, lossesS).has_value());

  auto c = bigVocabConfig(false);
  model::Decoder m(c.model, c.options, "pre_ln");
  m->eval();
  auto x = torch::randint(0, c.model.vocabSize, {2, 8}, torch::kInt64);
  model::ForwardTrace t;
  const auto decoders = probes::sequenceLosses(m->forward(x, {}, &t), x, {});
  auto losses = decoders.clone();
  EXPECT_TRUE(probes::chunkedHeadFor(m, t.blockInputs[0], x, {}, losses).has_value());
  EXPECT_LT(worstRelative(losses, decoders), 1e-5);
  // A decoder whose logits the path would not reproduce (here: losses that differ) keeps them.
  auto other = decoders * 1.01;
  EXPECT_FALSE(probes::chunkedHeadFor(m, t.blockInputs[0], x, {}, other).has_value());
  EXPECT_TRUE(torch::equal(other, decoders * 1.01));
}

TEST(HeadLoss, WindowLossesSumTheDecodersLossChunkedOnlyForALargeVocabulary) {
  namespace F = torch::nn::functional;
  for (bool big : {false, true}) {
    auto c = big ? bigVocabConfig(true) : test::smallConfig(3);
    torch::manual_seed(8);
    model::Decoder m(c.model, c.options, "pre_ln");
    m->eval();
    auto x = torch::randint(0, c.model.vocabSize, {3, 16}, torch::kInt64);
    auto y = torch::randint(0, c.model.vocabSize, {3, 16}, torch::kInt64);
    probes::WindowLosses losses(m);
    const double got = losses.sum(x, y) + losses.sum(x.slice(0, 1), y.slice(0, 1));
    EXPECT_EQ(losses.chunked(), big);
    torch::NoGradGuard ng;
    auto sumOf = [&](const torch::Tensor& in, const torch::Tensor& t) {
      auto logits = m->forward(in);
      return F::cross_entropy(logits.reshape({-1, logits.size(-1)}), t.reshape({-1}),
                              F::CrossEntropyFuncOptions().reduction(torch::kSum))
          .item<double>();
    };
    const double want = sumOf(x, y) + sumOf(x.slice(0, 1), y.slice(0, 1));
    EXPECT_NEAR(got, want, 1e-5 * want) << (big ? "chunked" : "logits");
  }
}

TEST(HeadLoss, GemmaSoftCapAndEmbeddingScaleTakeTheChunkedPath) {
  auto c = bigVocabConfig(true);
  c.model.finalSoftcap = 0.5;  // small enough to change every loss
  c.model.embedScale = 3.0;
  torch::manual_seed(9);
  model::Decoder m(c.model, c.options, "pre_ln");
  m->eval();
  auto x = torch::randint(0, c.model.vocabSize, {2, 16}, torch::kInt64);
  auto y = torch::randint(0, c.model.vocabSize, {2, 16}, torch::kInt64);
  probes::WindowLosses losses(m);
  const double got = losses.sum(x, y);
  EXPECT_TRUE(losses.chunked());
  torch::NoGradGuard ng;
  const double want = probes::lossOf(m->forward(x), y) * static_cast<double>(y.numel());
  EXPECT_NEAR(got, want, 1e-5 * want);
  const auto sweep = probes::singleLayerPruning(m, x, y, false);
  std::vector<bool> skip = {false, false, true, false};
  const double delta = probes::lossWithout(m, x, y, skip, false) - probes::lossOf(m->forward(x), y);
  EXPECT_NEAR(sweep.delta[2], delta, 2e-5 * std::max(1.0, std::abs(delta)));
}

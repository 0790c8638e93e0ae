// The probes' chunked traced forward: the chunks, agreement with one whole pass, and the same
// bits at any thread count (also when two threads trace at once).
#include <gtest/gtest.h>

#include <thread>

#include "probes/depth_probes.h"
#include "probes/traced_forward.h"
#include "support/model_fixtures.h"
#include "train/thread_share.h"

using namespace depthlab;

namespace {
using Chunks = std::vector<std::pair<int64_t, int64_t>>;

// 9 rows of 64 tokens: three chunks (4, 4 and 1 rows).
experiment::ExperimentConfig chunkedConfig() {
  auto c = test::smallConfig(3);
  c.model.seqLen = 64;
  c.model.embedStd = 1.0;
  return c;
}
model::Decoder build(const experiment::ExperimentConfig& c, const std::string& scheme) {
  torch::manual_seed(5);
  return model::Decoder(c.model, c.options, scheme);
}
torch::Tensor tokens(const experiment::ExperimentConfig& c) {
  torch::manual_seed(9);
  return torch::randint(0, c.model.vocabSize, {9, c.model.seqLen}, torch::kInt64);
}
struct Traced {
  torch::Tensor logits;
  model::ForwardTrace trace;
};
Traced traced(model::Decoder& m, const torch::Tensor& x) {
  torch::NoGradGuard ng;
  Traced t;
  t.logits = probes::tracedForward(m, x, t.trace);
  return t;
}
void expectSameBits(const torch::Tensor& a, const torch::Tensor& b, const char* what) {
  ASSERT_EQ(a.defined(), b.defined()) << what;
  if (a.defined()) {
    EXPECT_TRUE(torch::equal(a, b)) << what;
  }
}
}  // namespace

TEST(TracedForward, ChunksAreWholeRowsOfAboutAFixedNumberOfTokens) {
  EXPECT_EQ(probes::tracedChunks(8, 64), (Chunks{{0, 4}, {4, 8}}));
  EXPECT_EQ(probes::tracedChunks(9, 64), (Chunks{{0, 4}, {4, 8}, {8, 9}}));
  EXPECT_EQ(probes::tracedChunks(3, 300), (Chunks{{0, 1}, {1, 2}, {2, 3}}));  // a row at least
  EXPECT_EQ(probes::tracedChunks(2, 16), (Chunks{{0, 2}}));                 // one chunk: one pass
  EXPECT_EQ(probes::tracedChunks(1, 1024), (Chunks{{0, 1}}));
}

TEST(TracedForward, EqualsOneWholePass) {
  auto c = chunkedConfig();
  // Post-LN: no pre-norm outputs; DyT: the norm inputs too (the saturation probe's)
  for (const char* scheme : {"lns", "post_ln", "dyt"}) {
    SCOPED_TRACE(scheme);
    auto m = build(c, scheme);
    m->eval();
    auto x = tokens(c);
    model::ForwardTrace whole;
    torch::Tensor logits;
    {
      torch::NoGradGuard ng;
      logits = m->forward(x, {}, &whole);
    }
    auto t = traced(m, x);
    EXPECT_TRUE(torch::allclose(t.logits, logits, 1e-5, 1e-5));
    ASSERT_EQ(t.trace.blockInputs.size(), whole.blockInputs.size());
    for (size_t l = 0; l < whole.blockInputs.size(); ++l) {
      ASSERT_EQ(t.trace.blockInputs[l].sizes(), whole.blockInputs[l].sizes());
      EXPECT_TRUE(torch::allclose(t.trace.blockInputs[l], whole.blockInputs[l], 1e-5, 1e-5)) << l;
    }
    ASSERT_EQ(t.trace.blocks.size(), whole.blocks.size());
    for (size_t l = 0; l < whole.blocks.size(); ++l) {
      for (auto member : {&model::BlockTrace::attnNormOut, &model::BlockTrace::ffnNormOut,
                          &model::BlockTrace::attnNormIn, &model::BlockTrace::ffnNormIn}) {
        const auto& a = t.trace.blocks[l].*member;
        const auto& b = whole.blocks[l].*member;
        ASSERT_EQ(a.defined(), b.defined()) << l;
        if (b.defined()) {
          EXPECT_TRUE(torch::allclose(a, b, 1e-5, 1e-5)) << l;
        }
      }
    }
  }
}

TEST(TracedForward, SameBitsAtAnyThreadCountAndWhenTwoThreadsTraceAtOnce) {
  auto c = chunkedConfig();
  auto m = build(c, "lns");
  m->eval();
  auto x = tokens(c);
  Traced one, three;
  probes::ForwardProbes probesOne, probesTwo;
  {
    train::IntraOpThreads t(1);
    one = traced(m, x);
    probesOne = probes::runForwardProbes(m, x, x, {false, true});
  }
  {
    train::IntraOpThreads t(3);  // more workers than this machine may have cores
    three = traced(m, x);
    EXPECT_EQ(torch::get_num_threads(), 3);
  }
  {
    train::IntraOpThreads t(2);
    probesTwo = probes::runForwardProbes(m, x, x, {false, true});
  }
  expectSameBits(one.logits, three.logits, "logits");
  for (size_t l = 0; l < one.trace.blockInputs.size(); ++l) {
    expectSameBits(one.trace.blockInputs[l], three.trace.blockInputs[l], "block input");
  }
  for (size_t l = 0; l < one.trace.blocks.size(); ++l) {
    expectSameBits(one.trace.blocks[l].attnNormOut, three.trace.blocks[l].attnNormOut, "attn norm");
    expectSameBits(one.trace.blocks[l].ffnNormOut, three.trace.blocks[l].ffnNormOut, "ffn norm");
  }
  EXPECT_EQ(probesOne.variance, probesTwo.variance);
  EXPECT_EQ(probesOne.effectiveness, probesTwo.effectiveness);
  EXPECT_EQ(probesOne.probeLoss, probesTwo.probeLoss);
  // Two threads at once: one uses the kept team, the other runs its chunks in turn.
  Traced a, b;
  std::thread other([&] {
    train::IntraOpThreads t(2);
    b = traced(m, x);
  });
  {
    train::IntraOpThreads t(2);
    a = traced(m, x);
  }
  other.join();
  expectSameBits(a.logits, one.logits, "logits, first of two");
  expectSameBits(b.logits, one.logits, "logits, second of two");
}

// The logit lens: the chunked, online statistics equal the same statistics computed from whole
// log-softmaxes (any chunking, a soft-cap, tokens without a target), the settle depth counts
// what it says on a hand-made case, and on a model's traced pass the last block's lens is the
// model's own output (KL 0, agreement 1, cross-entropy = the probe loss) while pads are left out.
#include <gtest/gtest.h>

#include <cmath>

#include "data/token_dataset.h"
#include "probes/depth_probes.h"
#include "probes/logit_lens.h"
#include "probes/probe_tokens.h"
#include "probes/traced_forward.h"
#include "support/model_fixtures.h"

using namespace depthlab;

namespace {

// The statistics straight from (N, V) log-softmaxes in float64: what the lens means.
probes::LogitLens direct(const std::vector<torch::Tensor>& h, const torch::Tensor& w, double cap,
                         const torch::Tensor& targets) {
  auto logp = [&](const torch::Tensor& x) {
    auto z = torch::matmul(x.to(torch::kFloat64), w.to(torch::kFloat64).t());
    if (cap > 0) z = torch::tanh(z / cap) * cap;
    return torch::log_softmax(z, 1);  // (N, V)
  };
  const auto final = logp(h.back());
  const auto p = final.exp();
  const auto top = final.argmax(1);
  const auto counted = targets.ne(-100);
  probes::LogitLens r;
  std::vector<torch::Tensor> agree;
  for (const auto& x : h) {
    const auto q = logp(x);
    r.kl.push_back((p * (final - q)).sum(1).mean().item<float>());
    agree.push_back(q.argmax(1).eq(top));
    r.top1.push_back(agree.back().to(torch::kFloat64).mean().item<float>());
    r.entropy.push_back((-(q.exp() * q).sum(1)).mean().item<float>());
    auto nll = -q.gather(1, targets.clamp_min(0).unsqueeze(1)).squeeze(1);
    r.crossEntropy.push_back(nll.masked_select(counted).mean().item<float>());
  }
  // Settle: per token, walk back from the last block while the lens agrees.
  const int64_t L = static_cast<int64_t>(h.size()), N = h.front().size(0);
  double sum = 0;
  for (int64_t n = 0; n < N; ++n) {
    int64_t s = L;
    while (s > 1 && agree[static_cast<size_t>(s - 2)][n].item<bool>()) --s;
    sum += static_cast<double>(s);
  }
  r.settleDepth = sum / static_cast<double>(N);
  return r;
}

void expectSame(const probes::LogitLens& a, const probes::LogitLens& b, double tol) {
  auto near = [&](const std::vector<float>& x, const std::vector<float>& y, const char* what) {
    ASSERT_EQ(x.size(), y.size()) << what;
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_NEAR(x[i], y[i], tol * std::max(1.0f, std::abs(y[i]))) << what << " layer " << i;
    }
  };
  near(a.kl, b.kl, "KL");
  near(a.top1, b.top1, "top-1");
  near(a.entropy, b.entropy, "entropy");
  near(a.crossEntropy, b.crossEntropy, "cross-entropy");
  EXPECT_NEAR(a.settleDepth, b.settleDepth, 1e-9);
}

}  // namespace

TEST(LogitLens, ChunkedStatisticsEqualWholeLogSoftmaxes) {
  torch::manual_seed(3);
  const int64_t L = 5, N = 23, C = 12, V = 37;
  auto w = torch::randn({V, C});
  std::vector<torch::Tensor> h;
  auto x = torch::randn({N, C});
  for (int64_t l = 0; l < L; ++l) {  // layers drifting towards the last, so some agree
    x = x + 0.6 * torch::randn({N, C});
    h.push_back(x.clone());
  }
  auto targets = torch::randint(0, V, {N}, torch::kInt64);
  targets.index_put_({torch::tensor({2, 7, 19})}, -100);  // tokens without a target
  for (double cap : {0.0, 3.0}) {
    const auto want = direct(h, w, cap, targets);
    EXPECT_GT(want.kl.front(), 0.05);  // a case where the layers really differ
    EXPECT_LT(want.top1.front(), 0.99);
    for (int64_t chunk : {int64_t{1}, int64_t{8}, int64_t{36}, int64_t{37}, int64_t{4096}}) {
      SCOPED_TRACE("softcap " + std::to_string(cap) + ", chunk " + std::to_string(chunk));
      const auto got =
          probes::lensOfHidden(h, w.to(torch::kBFloat16).to(torch::kFloat32), cap, targets, chunk);
      expectSame(got, direct(h, w.to(torch::kBFloat16).to(torch::kFloat32), cap, targets), 1e-5);
      EXPECT_NEAR(got.kl.back(), 0.0, 1e-9);
      EXPECT_EQ(got.top1.back(), 1.0f);
    }
  }
}

TEST(LogitLens, TheSettleDepthIsTheStartOfTheAgreementThatLastsToTheEnd) {
  // Two classes (V = 2), C = 1: the sign of h picks the top-1. Token 0 agrees from block 2 on
  // after a flip at block 1; token 1 agrees at block 1, flips at 2, agrees again at 3: it settles
  // at 3, not 1. Mean (2 + 3) / 2.
  auto w = torch::tensor({{1.0f}, {-1.0f}});  // (V = 2, C = 1)
  std::vector<torch::Tensor> h = {torch::tensor({{-1.0f}, {2.0f}}),
                                  torch::tensor({{1.0f}, {-1.0f}}),
                                  torch::tensor({{2.0f}, {3.0f}})};  // L = 3 layers of (N = 2, 1)
  const auto r = probes::lensOfHidden(h, w, 0, torch::tensor({0, 1}, torch::kInt64));
  EXPECT_DOUBLE_EQ(r.settleDepth, 2.5);
  EXPECT_FLOAT_EQ(r.top1[0], 0.5f);
  EXPECT_FLOAT_EQ(r.top1[1], 0.5f);
  EXPECT_FLOAT_EQ(r.top1[2], 1.0f);
}

TEST(LogitLens, TheLastBlocksLensIsTheModelsOutputAndPadsAreLeftOut) {
  auto c = test::smallConfig(4);
  torch::manual_seed(5);
  model::Decoder m(c.model, c.options, "lns");
  m->eval();
  torch::NoGradGuard ng;
  const int64_t B = 3, T = c.model.seqLen;
  auto w = torch::randint(1, c.model.vocabSize, {B, T + 1}, torch::kInt64);
  auto x = w.slice(1, 0, T).clone(), y = w.slice(1, 1, T + 1).clone();
  model::ForwardTrace trace;
  const auto logits = probes::tracedForward(m, x, trace);
  const auto lens = probes::logitLensOfTrace(m, trace, y);
  ASSERT_EQ(lens.kl.size(), 4u);
  EXPECT_NEAR(lens.kl.back(), 0.0, 1e-6);
  EXPECT_FLOAT_EQ(lens.top1.back(), 1.0f);
  EXPECT_NEAR(lens.crossEntropy.back(), probes::lossOf(logits, y), 1e-5);
  EXPECT_GE(lens.settleDepth, 1.0);
  EXPECT_LE(lens.settleDepth, 4.0);
  // Pads after row 1's fifth input: what they hold changes nothing (they are left out).
  auto padded = [&](int64_t pad) {
    auto xp = x.clone(), yp = y.clone();
    xp.index_put_({1, torch::indexing::Slice(5, torch::indexing::None)}, pad);
    yp.index_put_({1, torch::indexing::Slice(4, torch::indexing::None)}, data::kIgnoreTarget);
    model::ForwardTrace t;
    probes::tracedForward(m, xp, t);
    return probes::logitLensOfTrace(m, t, yp);
  };
  expectSame(padded(0), padded(7), 1e-6);
  // Through runForwardProbes, asked for: the same numbers.
  const auto viaProbes = probes::runForwardProbes(m, x, y, {false, false, true});
  ASSERT_TRUE(viaProbes.lens.has_value());
  expectSame(*viaProbes.lens, lens, 1e-6);
  EXPECT_FALSE(probes::runForwardProbes(m, x, y, {}).lens.has_value());
}

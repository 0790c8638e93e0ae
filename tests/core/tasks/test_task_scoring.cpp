// Log-likelihoods of continuations: equal to the log-softmax of the decoder's own logits summed
// over the continuation's tokens, whatever the batch (right padding changes nothing), for a
// plain and a soft-capped head, and with blocks removed.
#include <gtest/gtest.h>

#include "support/model_fixtures.h"
#include "tasks/task_scoring.h"

using namespace depthlab;

namespace {

double reference(model::Decoder& m, const tasks::TokenizedRequest& r,
                 const model::ForwardOptions& opts = {}) {
  std::vector<int64_t> all(r.context.begin(), r.context.end());
  all.insert(all.end(), r.continuation.begin(), r.continuation.end());
  all.pop_back();
  torch::NoGradGuard ng;
  m->eval();
  auto logp = torch::log_softmax(m->forward(torch::tensor(all).unsqueeze(0), opts).squeeze(0), -1)
                  .to(torch::kFloat64);  // (T, V)
  double sum = 0;
  for (size_t k = 0; k < r.continuation.size(); ++k) {
    sum += logp[static_cast<int64_t>(r.context.size() - 1 + k)][r.continuation[k]].item<double>();
  }
  m->train();
  return sum;
}

}  // namespace

TEST(TaskScoring, SumsTheDecodersLogProbabilitiesOfTheContinuation) {
  for (double softcap : {0.0, 2.0}) {
    auto c = test::smallConfig(3);
    c.model.finalSoftcap = softcap;
    torch::manual_seed(6);
    model::Decoder m(c.model, c.options, "pre_ln");
    const std::vector<tasks::TokenizedRequest> requests = {
        {{5, 9, 1}, {7}}, {{3}, {4, 4, 8, 2}}, {{1, 2, 3, 4, 5, 6}, {10, 11}}};
    const auto one = tasks::logLikelihoods(m, requests, 1);
    const auto batched = tasks::logLikelihoods(m, requests, 3);
    ASSERT_EQ(one.size(), 3u);
    for (size_t i = 0; i < requests.size(); ++i) {
      EXPECT_NEAR(one[i], reference(m, requests[i]), 1e-4) << softcap << " " << i;
      EXPECT_NEAR(batched[i], one[i], 1e-5) << softcap << " " << i;
      EXPECT_LT(one[i], 0);
    }
  }
  // With blocks removed: the decoder's own pruned forward.
  auto c = test::smallConfig(3);
  torch::manual_seed(8);
  model::Decoder m(c.model, c.options, "lns");
  model::ForwardOptions pruned;
  pruned.skip = {false, true, false};
  const std::vector<tasks::TokenizedRequest> two = {{{2, 3}, {4, 5}}, {{9}, {1}}};
  const auto whole = tasks::logLikelihoods(m, two, 2);
  const auto without = tasks::logLikelihoods(m, two, 2, pruned);
  for (size_t i = 0; i < two.size(); ++i) {
    EXPECT_NEAR(without[i], reference(m, two[i], pruned), 1e-4) << i;
    EXPECT_GT(std::abs(without[i] - whole[i]), 1e-4) << i;
  }
  EXPECT_THROW(tasks::logLikelihoods(m, {{{}, {1}}}, 1), std::invalid_argument);
  EXPECT_THROW(tasks::logLikelihoods(m, {{{1}, {1}}}, 0), std::invalid_argument);
}

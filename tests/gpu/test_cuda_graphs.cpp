// CUDA graphs in the trainer (ctest label `gpu`; each test skips without a CUDA device): a
// trainer that replays its micro-steps from graphs gives the eager trainer's losses, gradient
// norms and weights (every scheme, fp32; the shapes imported models bring) and trains like it
// under bf16 autocast, with gradient accumulation; a new batch shape or parameters moved to new
// storage capture again; an update whose micro-batches differ in shape runs eagerly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "data/token_dataset.h"
#include "experiment/experiment_config.h"
#include "support/gpu_fixtures.h"
#include "support/model_fixtures.h"
#include "train/trainer.h"

using namespace depthlab;

namespace {

using test::kGpu;

// B x T tokens of the repeating pattern from `offset`, targets shifted by one.
data::TokenBatch patternBatch(int B, int T, int vocab, size_t offset) {
  const auto tokens = test::patternTokens(offset + static_cast<size_t>(B * (T + 1)), vocab);
  data::TokenBatch b;
  b.batch = B;
  b.seqLen = T;
  for (int r = 0; r < B; ++r) {
    for (int t = 0; t < T; ++t) {
      const size_t i = offset + static_cast<size_t>(r * (T + 1) + t);
      b.inputs.push_back(tokens[i]);
      b.targets.push_back(tokens[i + 1]);
    }
  }
  return b;
}

void expectSameWeights(train::Trainer& a, train::Trainer& b, double rel) {
  auto pa = a.model()->named_parameters(), pb = b.model()->named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    const auto x = pa[i].value().to(torch::kCPU, torch::kFloat64);
    const auto y = pb[i].value().to(torch::kCPU, torch::kFloat64);
    const double scale = std::max(1.0, x.abs().max().item<double>());
    EXPECT_LE((x - y).abs().max().item<double>(), rel * scale) << pa[i].key();
  }
}

}  // namespace

TEST(CudaGraphs, ReplaysGiveTheEagerLossesNormsAndWeights) {
  REQUIRE_CUDA();
  auto c = test::smallConfig(4);
  c.optim.gradAccum = 2;  // both graphs: the first micro-batch's and the accumulating one
  auto data = test::gpuPatternData(c);
  for (const auto& scheme : experiment::kSchemes) {
    SCOPED_TRACE(scheme);
    train::Trainer eager(experiment::trainerConfig(c), scheme, kGpu);
    train::Trainer graphed(experiment::trainerConfig(c), scheme, kGpu);
    eager.setCudaGraphs(false);
    graphed.setCudaGraphs(true);
    ASSERT_TRUE(graphed.cudaGraphs());
    for (int s = 0; s < 5; ++s) {
      const auto a = eager.trainStep(data, s), b = graphed.trainStep(data, s);
      EXPECT_NEAR(a.loss, b.loss, 1e-5 * std::max(1.0, std::fabs(a.loss))) << "step " << s;
      EXPECT_NEAR(a.gradNorm, b.gradNorm, 1e-4 * std::max(1.0, a.gradNorm)) << "step " << s;
      ASSERT_EQ(a.layerGradNorms.size(), b.layerGradNorms.size());
      for (size_t l = 0; l < a.layerGradNorms.size(); ++l) {
        EXPECT_NEAR(a.layerGradNorms[l], b.layerGradNorms[l],
                    1e-4 * std::max(1.0f, a.layerGradNorms[l]))
            << "step " << s << " layer " << l;
      }
    }
    EXPECT_EQ(graphed.cudaGraphsError(), "");
    EXPECT_TRUE(graphed.cudaGraphs());
    EXPECT_EQ(graphed.cudaGraphCaptures(), 2);
    EXPECT_EQ(graphed.cudaGraphReplays(), 10);
    EXPECT_EQ(eager.cudaGraphReplays(), 0);
    expectSameWeights(eager, graphed, 1e-5);
  }
}

TEST(CudaGraphs, ImportedModelShapesReplayLikeEager) {
  // The shapes Hugging Face imports bring (grouped-query attention, whose keys and values are
  // repeated over the query heads, a head width apart from C / H, q/k/v biases, a tied head)
  // replay from graphs as they train eagerly.
  REQUIRE_CUDA();
  auto c = test::smallConfig(3);
  c.model.nKvHeads = 2;  // of 4 query heads
  c.model.headDim = 16;  // q is 64 wide on a 32-wide stream
  c.model.qkvBias = true;
  c.model.tieEmbeddings = true;
  c.optim.gradAccum = 2;
  auto data = test::gpuPatternData(c);
  for (const char* scheme : {"pre_ln", "lns"}) {
    SCOPED_TRACE(scheme);
    train::Trainer eager(experiment::trainerConfig(c), scheme, kGpu);
    train::Trainer graphed(experiment::trainerConfig(c), scheme, kGpu);
    eager.setCudaGraphs(false);
    graphed.setCudaGraphs(true);
    for (int s = 0; s < 5; ++s) {
      const auto a = eager.trainStep(data, s), b = graphed.trainStep(data, s);
      EXPECT_NEAR(a.loss, b.loss, 1e-5 * std::max(1.0, std::fabs(a.loss))) << "step " << s;
      EXPECT_NEAR(a.gradNorm, b.gradNorm, 1e-4 * std::max(1.0, a.gradNorm)) << "step " << s;
    }
    EXPECT_EQ(graphed.cudaGraphsError(), "");
    EXPECT_EQ(graphed.cudaGraphReplays(), 10);
    expectSameWeights(eager, graphed, 1e-5);
  }
}

TEST(CudaGraphs, Bf16AutocastReplaysTrainLikeEager) {
  REQUIRE_CUDA();
  auto c = test::smallConfig(4);
  c.run.bf16 = true;
  auto data = test::gpuPatternData(c);
  train::Trainer eager(experiment::trainerConfig(c), "lns", kGpu);
  train::Trainer graphed(experiment::trainerConfig(c), "lns", kGpu);
  eager.setCudaGraphs(false);
  graphed.setCudaGraphs(true);
  double first = 0, last = 0;
  for (int s = 0; s < 20; ++s) {
    const double a = eager.trainStep(data, s).loss, b = graphed.trainStep(data, s).loss;
    EXPECT_NEAR(a, b, 2e-3 * std::max(1.0, std::fabs(a))) << "step " << s;
    if (s == 0) first = b;
    last = b;
  }
  EXPECT_LT(last, first);
  EXPECT_EQ(graphed.cudaGraphsError(), "");
  EXPECT_EQ(graphed.cudaGraphReplays(), 20);
}

TEST(CudaGraphs, NewShapesAndMovedParametersCaptureAgainMixedShapesRunEagerly) {
  REQUIRE_CUDA();
  auto c = test::smallConfig(2);
  train::Trainer eager(experiment::trainerConfig(c), "lns", kGpu);
  train::Trainer graphed(experiment::trainerConfig(c), "lns", kGpu);
  eager.setCudaGraphs(false);
  graphed.setCudaGraphs(true);
  const int V = c.model.vocabSize;
  const std::vector<std::vector<data::TokenBatch>> updates = {
      {patternBatch(4, 16, V, 0), patternBatch(4, 16, V, 100)},  // capture (2 graphs)
      {patternBatch(4, 16, V, 200), patternBatch(4, 16, V, 300)},
      {patternBatch(4, 8, V, 400), patternBatch(4, 8, V, 500)},   // new T: capture again
      {patternBatch(4, 16, V, 600), patternBatch(2, 8, V, 700)},  // mixed shapes: eager
      {patternBatch(4, 8, V, 800)},                               // one micro-batch: 1 graph
  };
  const int64_t captures[] = {2, 2, 4, 4, 5}, replays[] = {2, 4, 6, 6, 7};
  for (size_t u = 0; u < updates.size(); ++u) {
    const auto a = eager.trainStepOn(updates[u], static_cast<int64_t>(u));
    const auto b = graphed.trainStepOn(updates[u], static_cast<int64_t>(u));
    EXPECT_NEAR(a.loss, b.loss, 1e-5 * std::max(1.0, std::fabs(a.loss))) << "update " << u;
    EXPECT_NEAR(a.gradNorm, b.gradNorm, 1e-4 * std::max(1.0, a.gradNorm)) << "update " << u;
    EXPECT_EQ(graphed.cudaGraphCaptures(), captures[u]) << "update " << u;
    EXPECT_EQ(graphed.cudaGraphReplays(), replays[u]) << "update " << u;
  }
  // Parameters moved to new storage (what loading into new tensors does): the graphs would
  // read the old addresses, so the next update captures again. The old storage is held so the
  // allocator cannot hand the same addresses back.
  std::vector<torch::Tensor> oldStorage;
  for (const auto& p : graphed.model()->parameters()) oldStorage.push_back(p.detach());
  graphed.model()->to(torch::kCPU);
  graphed.model()->to(kGpu);
  eager.model()->to(torch::kCPU);
  eager.model()->to(kGpu);
  const auto last = updates.back();
  const auto a = eager.trainStepOn(last, 9), b = graphed.trainStepOn(last, 9);
  EXPECT_NEAR(a.loss, b.loss, 1e-5 * std::max(1.0, std::fabs(a.loss)));
  EXPECT_EQ(graphed.cudaGraphCaptures(), 6);
  EXPECT_EQ(graphed.cudaGraphsError(), "");
  expectSameWeights(eager, graphed, 1e-5);
}

// Layer diagnosis: ranks with ties, Spearman's rank correlation, and the per-run table of
// proxies against the measured single-layer pruning at a step.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/layer_diagnosis.h"
#include "store/metric_catalogue.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

// A run named `name` in `s` holding `batch`.
int64_t runWith(store::RunStore& s, const std::string& name, const store::WriteBatch& batch) {
  store::NewRun nr;
  nr.name = name;
  nr.scheme = "pre_ln";
  const int64_t id = s.createRun(nr);
  s.write(id, batch);
  return id;
}

}  // namespace

TEST(LayerDiagnosis, RanksShareTiesAndSkipNaN) {
  const auto r = analysis::ranks({3.0, 1.0, 2.0, 1.0, NAN});
  EXPECT_DOUBLE_EQ(r[0], 4.0);
  EXPECT_DOUBLE_EQ(r[1], 1.5);
  EXPECT_DOUBLE_EQ(r[2], 3.0);
  EXPECT_DOUBLE_EQ(r[3], 1.5);
  EXPECT_TRUE(std::isnan(r[4]));
}

TEST(LayerDiagnosis, SpearmanIsOneForAnyMonotoneRelation) {
  EXPECT_NEAR(*analysis::spearman({1, 2, 3, 4}, {10, 100, 1000, 1e4}), 1.0, 1e-12);
  EXPECT_NEAR(*analysis::spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0, 1e-12);
  // Known value: d = (0, 1, -1, 0) -> 1 - 6 * 2 / (4 * 15) = 0.8
  EXPECT_NEAR(*analysis::spearman({1, 2, 3, 4}, {1, 3, 2, 4}), 0.8, 1e-12);
  EXPECT_FALSE(analysis::spearman({1, 2}, {1, 2}).has_value());       // too few pairs
  EXPECT_FALSE(analysis::spearman({1, 1, 1}, {1, 2, 3}).has_value());  // a constant side
  EXPECT_NEAR(*analysis::spearman({1, NAN, 2, 3}, {1, 5, 2, 3}), 1.0, 1e-12);  // NaN pairs dropped
}

TEST(LayerDiagnosis, RanksLayersByMeasuredPruningBesideTheProxies) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("d.db"));
  store::WriteBatch b;
  // Pruning at steps 10 and 20; the proxies at 20 only. Layer 3 is the cheapest to drop.
  b.layer(10, metrics::kPruneDelta, {0.9f, 0.1f, 0.5f, 0.3f});
  b.layer(20, metrics::kPruneDelta, {0.9f, 0.5f, 0.05f, 0.3f});
  b.layer(20, metrics::kAngularAdjacent, {0.8f, 0.6f, 0.1f, 0.3f});   // the same order: rho 1
  b.layer(20, metrics::kBlockInfluence, {0.1f, 0.3f, 0.8f, 0.6f});    // reversed: rho -1
  const int64_t id = runWith(s, "r", b);
  const auto d = analysis::diagnoseLayers(s, id);
  EXPECT_EQ(d.runId, id);
  EXPECT_EQ(d.step, 20);
  ASSERT_EQ(d.layers, 4);
  EXPECT_EQ(d.dropOrder, (std::vector<int>{2, 3, 1, 0}));
  ASSERT_EQ(d.proxies.size(), 3u);
  EXPECT_EQ(d.proxies[0].key, metrics::kAngularAdjacent);
  EXPECT_NEAR(*d.proxies[0].spearmanVsPruning, 1.0, 1e-12);
  EXPECT_NEAR(*d.proxies[1].spearmanVsPruning, -1.0, 1e-12);
  EXPECT_FALSE(d.proxies[2].spearmanVsPruning.has_value());  // effectiveness not measured
  EXPECT_DOUBLE_EQ(d.pruningRanks[2], 1.0);
  // At step 15 the step-10 pruning is used, and the proxies (from step 20) are not measured yet.
  const auto early = analysis::diagnoseLayers(s, id, 15);
  EXPECT_EQ(early.step, 10);
  EXPECT_EQ(early.dropOrder.front(), 1);
  EXPECT_TRUE(std::isnan(early.proxies[0].values[0]));
  EXPECT_EQ(analysis::diagnoseLayers(s, id, 5).step, -1);  // no pruning by step 5
}

TEST(LayerDiagnosis, DeltasWithinTwoStandardErrorsOfZeroAreCountedAsNoise) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("se.db"));
  store::WriteBatch b;
  b.layer(20, metrics::kPruneDelta, {0.9f, 0.5f, 0.05f, -0.3f});
  b.layer(20, metrics::kPruneDeltaError, {0.01f, 0.3f, 0.01f, 0.2f});  // layers 2 and 4: noise
  const auto d = analysis::diagnoseLayers(s, runWith(s, "r", b));
  ASSERT_EQ(d.pruningError.size(), 4u);
  EXPECT_FLOAT_EQ(static_cast<float>(d.pruningError[1]), 0.3f);
  EXPECT_EQ(d.withinNoiseCount(), 2);
  // Without standard errors (one probe sequence, or runs from before they were stored): none.
  store::WriteBatch ob;
  ob.layer(20, metrics::kPruneDelta, {0.9f, 0.5f, 0.05f, -0.3f});
  const auto o = analysis::diagnoseLayers(s, runWith(s, "old", ob));
  EXPECT_TRUE(std::isnan(o.pruningError[0]));
  EXPECT_EQ(o.withinNoiseCount(), 0);
}

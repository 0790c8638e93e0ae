// The metric catalogue (store/metric_catalogue.h): the store refuses keys it does not list,
// every row is described, keys are unique per kind, and a real training group with every probe
// writes only catalogued keys (else its write would have failed) and every scalar and per-layer
// row it is meant to.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "experiment/run_group.h"
#include "store/metric_catalogue.h"
#include "store/run_store.h"
#include "support/model_fixtures.h"
#include "support/run_fixtures.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

int64_t makeRun(store::RunStore& s) {
  store::NewRun nr;
  nr.name = "r";
  nr.scheme = "pre_ln";
  return s.createRun(nr);
}

std::string writeError(store::RunStore& s, int64_t id, const store::WriteBatch& b) {
  try {
    s.write(id, b);
  } catch (const store::StoreError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(MetricCatalogue, TheStoreRefusesAKeyNotInTheCatalogue) {
  auto s = store::RunStore::open(":memory:");
  const int64_t id = makeRun(s);
  store::WriteBatch b;
  b.scalar(0, metrics::kLossTrain, 3.0);
  b.scalar(0, "loss_trian", 3.0);  // a typo
  const std::string error = writeError(s, id, b);
  EXPECT_NE(error.find("loss_trian"), std::string::npos) << error;
  EXPECT_NE(error.find("not in the metric catalogue"), std::string::npos) << error;
  EXPECT_TRUE(s.scalarKeys(id).empty());  // nothing of the batch was written
}

TEST(MetricCatalogue, TheStoreRefusesAKeyOfTheWrongKindNamingTheRightOne) {
  auto s = store::RunStore::open(":memory:");
  const int64_t id = makeRun(s);
  store::WriteBatch perLayer;
  perLayer.layer(0, metrics::kLr, {1.0f, 2.0f});
  EXPECT_NE(writeError(s, id, perLayer).find("as scalar"), std::string::npos);
  store::WriteBatch matrix;
  matrix.matrix(0, metrics::kVariance, 1, 1, {1.0f});
  EXPECT_NE(writeError(s, id, matrix).find("as per-layer"), std::string::npos);
  EXPECT_TRUE(s.layerMetrics(id).empty());
  EXPECT_TRUE(s.matrixKinds(id).empty());
}

TEST(MetricCatalogue, RowsAreUniqueAndDescribed) {
  std::set<std::pair<std::string, int>> seen;
  for (const auto& m : metrics::catalogue()) {
    SCOPED_TRACE(std::string(m.key));
    EXPECT_TRUE(seen.insert({std::string(m.key), static_cast<int>(m.kind)}).second) << "twice";
    EXPECT_FALSE(m.label.empty());
    EXPECT_FALSE(m.description.empty());
    EXPECT_EQ(metrics::find(m.key, m.kind), &m);
  }
  EXPECT_THROW(metrics::require("nope", metrics::Kind::Scalar), std::invalid_argument);
  // grad_norm is both a scalar (global) and a per-layer metric.
  EXPECT_NE(metrics::find(metrics::kGradNorm, metrics::Kind::Scalar), nullptr);
  EXPECT_NE(metrics::find(metrics::kLayerGradNorm, metrics::Kind::PerLayer), nullptr);
}

TEST(MetricCatalogue, ViewsListTheirRowsInCatalogueOrder) {
  const auto layers = metrics::keysFor(metrics::Kind::PerLayer, metrics::kDashboard);
  const std::vector<std::string> expected = {
      "variance",      "angular_adjacent", "prune_delta",     "effectiveness",
      "grad_norm",     "dyt_saturation",   "block_influence", "lens_kl",
      "act_max_ratio", "attn_contrib",     "mlp_contrib",     "attn_sink"};
  EXPECT_EQ(layers, expected);
  const auto compare = metrics::keysFor(metrics::Kind::PerLayer, metrics::kCompare);
  EXPECT_EQ(compare, (std::vector<std::string>{
                         "variance",      "angular_adjacent",  "prune_delta",    "dyt_saturation",
                         "lens_kl",       "lens_top1",         "lens_ce",        "tuned_kl",
                         "tuned_top1",    "tuned_ce",          "spectral_alpha", "stable_rank",
                         "act_max_ratio", "first_token_ratio", "rankme",         "attn_contrib",
                         "mlp_contrib",   "attn_cos",          "mlp_cos",        "attn_entropy",
                         "attn_sink",     "sink_rate"}));
  for (const auto& k : metrics::keysFor(metrics::Kind::Scalar, metrics::kNoPanel)) {
    ADD_FAILURE() << "kNoPanel selects nothing, got " << k;
  }
}

TEST(MetricCatalogue, ATrainingGroupWritesOnlyCataloguedKeys) {
  test::TempDir dir;
  auto store = store::RunStore::open(dir.file("runs.db"));
  auto c = test::smallConfig(3);
  c.data.corpus = test::writeWordCorpus(dir);
  c.optim.steps = 6;
  c.run.evalEvery = 3;
  c.probes.forwardEvery = 2;
  c.probes.jacobianEvery = 3;
  c.probes.angularMatrixEvery = 3;
  c.probes.pruningEvery = 3;
  c.probes.blockPruningAtEnd = true;
  c.schemes = {"lns", "dyt"};
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  auto r = experiment::runGroup(c, store, o);  // a refused key would have thrown here
  ASSERT_EQ(r.members.size(), 2u);
  const int64_t id = r.members[0].runId, dyt = r.members[1].runId;
  // The DyT probes exist for DyT runs only.
  EXPECT_FALSE(store.layerSeries(dyt, metrics::kDytSaturation).steps.empty());
  EXPECT_FALSE(store.scalarSeries(dyt, metrics::kDytSaturationFinal).empty());
  EXPECT_TRUE(store.layerSeries(id, metrics::kDytSaturation).steps.empty());
  for (const auto& k : store.scalarKeys(dyt)) {
    EXPECT_NE(metrics::find(k, metrics::Kind::Scalar), nullptr) << k;
  }
  for (const auto& k : store.layerMetrics(dyt)) {
    EXPECT_NE(metrics::find(k, metrics::Kind::PerLayer), nullptr) << k;
  }
  // Everything the dashboard reads exists after such a run.
  for (const auto& k : metrics::keysFor(metrics::Kind::Scalar, metrics::kDashboard)) {
    EXPECT_FALSE(store.scalarSeries(id, k).empty()) << k;
  }
  for (const auto& k : metrics::keysFor(metrics::Kind::PerLayer, metrics::kDashboard)) {
    EXPECT_FALSE(store.layerSeries(k == metrics::kDytSaturation ? dyt : id, k).steps.empty()) << k;
  }
  for (const auto& k : metrics::keysFor(metrics::Kind::Matrix, metrics::kDashboard)) {
    EXPECT_FALSE(store.matrixSteps(id, k).empty()) << k;
  }
}

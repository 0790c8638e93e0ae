// The run report (experiment/run_report) holds what the metric catalogue marks kReport: every
// such metric stored for a run, under the catalogue's label and unit, and no metric without the
// flag; the summaries over depth and the step they are taken at.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>

#include "experiment/run_report.h"
#include "store/metric_catalogue.h"
#include "store/run_store.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

// A run with every scalar and per-layer metric of the catalogue at step 10 (scalars: distinct
// whole values, returned by key; per layer: 1, 2, 4, 8).
int64_t addRunWithEveryMetric(store::RunStore& s, std::map<std::string, double>* scalars) {
  store::NewRun nr;
  nr.name = "every metric";
  nr.groupName = "g";
  nr.scheme = "dyt";
  const int64_t id = s.createRun(nr);
  store::WriteBatch w;
  double v = 3;
  for (const auto& m : metrics::catalogue()) {
    const std::string key(m.key);
    if (m.kind == metrics::Kind::Scalar) w.scalar(10, key, (*scalars)[key] = v++);
    if (m.kind == metrics::Kind::PerLayer) w.layer(10, key, {1.0f, 2.0f, 4.0f, 8.0f});
  }
  s.write(id, w);
  return id;
}

}  // namespace

TEST(RunReport, HoldsEveryMetricTheCatalogueMarksForTheReportAndNoOther) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  std::map<std::string, double> scalars;
  const auto r = experiment::makeRunReport(s, addRunWithEveryMetric(s, &scalars));
  std::set<std::pair<std::string, metrics::Kind>> shown;
  for (const auto& v : r.values) {
    const auto kind = scalars.count(v.metric) && v.key == v.metric ? metrics::Kind::Scalar
                                                                   : metrics::Kind::PerLayer;
    const auto& m = metrics::require(v.metric, kind);
    EXPECT_TRUE(m.panels & metrics::kReport) << v.key << " is shown without kReport";
    EXPECT_EQ(v.label.rfind(std::string(m.label), 0), 0u) << v.label;  // the catalogue's label
    EXPECT_EQ(v.unit, m.unit) << v.key;
    ASSERT_TRUE(v.value) << v.key << ": stored, yet missing from the report";
    if (kind == metrics::Kind::Scalar) EXPECT_DOUBLE_EQ(*v.value, scalars[v.metric]) << v.key;
    shown.insert({v.metric, kind});
  }
  for (auto kind : {metrics::Kind::Scalar, metrics::Kind::PerLayer}) {
    for (const auto& key : metrics::keysFor(kind, metrics::kReport)) {
      EXPECT_TRUE(shown.count({key, kind})) << key << " has kReport but is not in the report";
    }
  }
  EXPECT_TRUE(r.missing.empty());
  // A scalar without kReport (the learning rate) is stored but not in the report.
  ASSERT_FALSE(metrics::require(metrics::kLr, metrics::Kind::Scalar).panels & metrics::kReport);
  EXPECT_EQ(r.find(metrics::kLr), nullptr);
}

TEST(RunReport, SummarisesLayersOverDepthAtTheRowsStep) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  std::map<std::string, double> scalars;
  const auto r = experiment::makeRunReport(s, addRunWithEveryMetric(s, &scalars));
  EXPECT_EQ(r.steps, 11);  // loss_train at update index 10
  EXPECT_EQ(r.probeStep, 10);
  EXPECT_EQ(r.nLayers, 4);
  ASSERT_TRUE(r.lossVal);
  EXPECT_DOUBLE_EQ(*r.lossVal, scalars[metrics::kLossVal]);
  const auto value = [&](const char* key) {
    const auto* v = r.find(key);
    return v && v->value ? *v->value : std::nan("");
  };
  EXPECT_DOUBLE_EQ(value("variance_last"), 8.0);
  EXPECT_DOUBLE_EQ(value("variance_mean"), 3.75);
  EXPECT_NEAR(value("log_variance_slope"), std::log(2.0), 1e-9);
  EXPECT_DOUBLE_EQ(value("angular_deep_mean"), 6.0);
  EXPECT_DOUBLE_EQ(value("prune_delta_deep_mean"), 6.0);
  EXPECT_DOUBLE_EQ(value("prune_delta_shallow_mean"), 1.5);
  EXPECT_DOUBLE_EQ(value("dyt_saturation_mean"), 3.75);  // no summary of its own: the mean
  EXPECT_EQ(r.find("lazy_layers")->format, experiment::ReportValue::Format::LayerCount);
}

TEST(RunReport, ABareRunLacksWhatCanBeMeasuredOnly) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  store::NewRun nr;
  nr.name = "bare";
  nr.scheme = "pre_ln";
  const auto r = experiment::makeRunReport(s, s.createRun(nr));
  // Not the training loss, the perplexity or DyT's saturation: nothing measures them later.
  const std::vector<std::string> want = {
      metrics::kLossVal,           metrics::kLazyLayers,      metrics::kLensSettle,
      metrics::kSpectralAlphaMean, metrics::kEffectiveDepth,  metrics::kJumpStrength,
      metrics::kVariance,          metrics::kAngularAdjacent, metrics::kPruneDelta};
  EXPECT_EQ(r.missing, want);
  for (const auto& v : r.values) EXPECT_FALSE(v.value) << v.key;
}

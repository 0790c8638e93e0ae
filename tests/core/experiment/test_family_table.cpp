// The family table from stored probe rows: families from the import record, lazy layers by E_l
// with each run's own thresholds and by pruning loss against the probe loss, the CSV / LaTeX
// tables (names quoted and escaped) and the per-layer profiles against relative depth.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "experiment/experiment_config.h"
#include "experiment/family_table.h"
#include "store/metric_catalogue.h"
#include "support/imported_run.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

// A run of `layers` layers imported as `architecture` ("" : trained here), with probe rows.
int64_t addModel(store::RunStore& s, const std::string& name, const std::string& architecture,
                 int layers, double lazyThreshold, const std::vector<float>& effectiveness,
                 const std::vector<float>& pruneDelta, double probeLoss) {
  const int64_t id = test::addImportedRun(s, name, architecture, layers, lazyThreshold);
  test::writeImportedProbes(
      s, id, {effectiveness, pruneDelta, {}, std::vector<float>(layers, 0.25f), probeLoss});
  return id;
}

}  // namespace

TEST(FamilyTable, CountsLazyLayersByEachRunsThresholdsAndByPruningLoss) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  const int64_t llama = addModel(s, "llama, small", "LlamaForCausalLM", 4, 0.05,
                                 {0.5f, 0.04f, 0.1f, 0.01f}, {2.0f, 0.01f, 0.5f, 0.001f}, 3.0);
  const int64_t qwen = addModel(s, "qwen_50%", "Qwen3ForCausalLM", 4, 0.2,  // its own threshold
                                {0.5f, 0.04f, 0.1f, 0.01f}, {2.0f, 0.2f, 0.5f, 0.001f}, 3.0);
  const auto t = experiment::makeFamilyTable(s, {llama, qwen}, 0.01);
  ASSERT_EQ(t.rows.size(), 2u);
  const auto& a = t.rows[0];
  EXPECT_EQ(a.family, "Llama");
  EXPECT_EQ(a.nLayers, 4);
  ASSERT_TRUE(a.byEffectiveness);
  EXPECT_EQ(a.byEffectiveness->lazy, 2);  // 0.04, 0.01 < 0.05
  EXPECT_EQ(a.byEffectiveness->low, 1);   // 0.1
  EXPECT_EQ(a.byEffectiveness->effective, 1);
  ASSERT_TRUE(a.lazyByPruning);
  EXPECT_EQ(*a.lazyByPruning, 2);  // deltas under 1% of 3.0: 0.01, 0.001
  const auto& q = t.rows[1];
  EXPECT_EQ(q.family, "Qwen3");
  EXPECT_EQ(q.byEffectiveness->lazy, 3);  // its threshold 0.2 takes 0.1 too
  EXPECT_EQ(*q.lazyByPruning, 1);

  const std::string csv = experiment::familyTableCsv(t);
  EXPECT_NE(
      csv.find("\"llama, "
               "small\",Llama,LlamaForCausalLM,4,0,2,1,1,0.5000,0.2500,0.05,0.2,2,0.5000,0.01,3"),
      std::string::npos)
      << csv;
  const std::string tex = experiment::familyTableLatex(t);
  EXPECT_NE(tex.find("qwen\\_50\\%"), std::string::npos) << tex;
  EXPECT_NE(tex.find("2 (50\\%)"), std::string::npos) << tex;
  const std::string profiles = experiment::familyProfilesCsv(t);
  EXPECT_NE(profiles.find("\"llama, small\",Llama,4,1.0000,0.001,,0.25,0.01"), std::string::npos)
      << profiles;
}

TEST(FamilyTable, CarriesTheLensSettleDepthTheMeanAlphaAndTheEffectiveDepthWhereMeasured) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  const int64_t a =
      addModel(s, "a", "LlamaForCausalLM", 4, 0.05, {0.5f, 0.5f, 0.5f, 0.5f}, {1, 1, 1, 1}, 3.0);
  const int64_t b =
      addModel(s, "b", "LlamaForCausalLM", 4, 0.05, {0.5f, 0.5f, 0.5f, 0.5f}, {1, 1, 1, 1}, 3.0);
  store::WriteBatch w;
  w.scalar(0, metrics::kLensSettle, 3.25);
  w.scalar(0, metrics::kSpectralAlphaMean, 4.5);
  w.scalar(0, metrics::kEffectiveDepth, 0.75);
  w.scalar(0, metrics::kJumpStrength, 2.5);
  s.write(a, w);
  const auto t = experiment::makeFamilyTable(s, {a, b});
  ASSERT_TRUE(t.rows[0].lensSettle && t.rows[0].spectralAlpha && t.rows[0].effectiveDepth &&
              t.rows[0].jumpStrength);
  EXPECT_DOUBLE_EQ(*t.rows[0].lensSettle, 3.25);
  EXPECT_DOUBLE_EQ(*t.rows[0].spectralAlpha, 4.5);
  EXPECT_DOUBLE_EQ(*t.rows[0].effectiveDepth, 0.75);
  EXPECT_DOUBLE_EQ(*t.rows[0].jumpStrength, 2.5);
  EXPECT_FALSE(t.rows[1].lensSettle || t.rows[1].spectralAlpha || t.rows[1].effectiveDepth ||
               t.rows[1].jumpStrength);
  const std::string csv = experiment::familyTableCsv(t);
  EXPECT_NE(csv.find(",3,3.25,4.5,0.75,2.5\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",3,,,,\n"), std::string::npos) << csv;
}

TEST(FamilyTable, NamesFamiliesAndWhatAModelLacks) {
  EXPECT_EQ(experiment::familyOfArchitecture("Gemma2ForCausalLM"), "Gemma 2");
  EXPECT_EQ(experiment::familyOfArchitecture("Olmo2ForCausalLM"), "OLMo 2");
  EXPECT_EQ(experiment::familyOfArchitecture("FalconForCausalLM"), "Falcon");
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  store::NewRun nr;
  nr.name = "bare";
  nr.scheme = "lns";
  nr.configJson = experiment::toJson(test::smallConfig(3)).dump();
  const int64_t id = s.createRun(nr);
  const auto t = experiment::makeFamilyTable(s, {id});
  EXPECT_EQ(t.rows[0].family, "trained: lns");
  EXPECT_FALSE(t.rows[0].byEffectiveness);
  EXPECT_FALSE(t.rows[0].lazyByPruning);
  EXPECT_EQ(t.rows[0].missing.size(), 3u);
  EXPECT_THROW(experiment::makeFamilyTable(s, {id + 7}), store::StoreError);
}

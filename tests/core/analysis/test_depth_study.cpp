// The depth study over a tiny stored group: the ranking by validation loss and by the pruning
// loss of the deepest quarter, seed bands over two seeds, "-" and a note where a probe is
// missing, display names from the catalogue, and the JSON.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/depth_study.h"
#include "experiment/experiment_config.h"
#include "model/scheme_catalogue.h"
#include "store/metric_catalogue.h"
#include "support/model_fixtures.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

struct StoredRun {
  std::string scheme;
  int64_t seed = 1;
  double lossVal = 3.0;
  std::vector<float> variance, pruneDelta, effectiveness;  // empty: not written
};

int64_t addRun(store::RunStore& s, const StoredRun& r, const std::string& group = "study 1") {
  auto c = test::smallConfig(
      static_cast<int>(std::max({r.variance.size(), r.pruneDelta.size(), size_t{4}})));
  c.schemes = {r.scheme};
  c.run.seed = r.seed;
  store::NewRun nr;
  nr.name = group + " " + r.scheme;
  nr.groupName = group;
  nr.scheme = r.scheme;
  nr.seed = r.seed;
  nr.configJson = experiment::toJson(c).dump();
  const int64_t id = s.createRun(nr);
  store::WriteBatch b;
  b.scalar(19, metrics::kLossTrain, r.lossVal + 0.1);
  b.scalar(20, metrics::kLossVal, r.lossVal);
  if (!r.variance.empty()) b.layer(20, metrics::kVariance, r.variance);
  if (!r.pruneDelta.empty()) b.layer(20, metrics::kPruneDelta, r.pruneDelta);
  if (!r.effectiveness.empty()) b.layer(20, metrics::kEffectiveness, r.effectiveness);
  s.write(id, b);
  return id;
}

const analysis::StudyRow& rowOf(const analysis::DepthStudy& st, const std::string& scheme) {
  for (const auto& r : st.rows) {
    if (r.scheme == scheme) return r;
  }
  throw std::runtime_error("no row for " + scheme);
}

}  // namespace

TEST(DepthStudy, DeepQuarterIsTheLastQuarterAtLeastOneLayer) {
  EXPECT_EQ(analysis::deepQuarterLayers(24), 6);
  EXPECT_EQ(analysis::deepQuarterLayers(12), 3);
  EXPECT_EQ(analysis::deepQuarterLayers(6), 1);
  EXPECT_EQ(analysis::deepQuarterLayers(2), 1);
  EXPECT_EQ(analysis::deepQuarterLayers(0), 0);
}

TEST(DepthStudy, RanksByLossAndByDeepQuarterPruningLoss) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  // 8 layers: the deepest quarter is layers 7 and 8.
  addRun(s, {"pre_ln",
             1,
             3.2,
             {1, 2, 3, 4, 5, 6, 7, 8},
             {9, 9, 9, 9, 9, 9, 0.1f, 0.3f},
             {0.5f, 0.5f, 0.5f, 0.5f, 0.1f, 0.1f, 0.01f, 0.01f}});
  addRun(s, {"lns",
             1,
             3.0,
             {1, 1, 1, 1, 1, 1, 1, 2},
             {0, 0, 0, 0, 0, 0, 1.0f, 2.0f},
             {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f}});
  addRun(s, {"post_ln",
             1,
             3.1,
             {2, 2, 2, 2, 2, 2, 2, 3},
             {0, 0, 0, 0, 0, 0, 0.5f, 0.7f},
             {0.3f, 0.3f, 0.3f, 0.3f, 0.3f, 0.3f, 0.3f, 0.04f}});
  std::vector<int64_t> ids;
  for (const auto& r : s.listRuns()) ids.push_back(r.id);
  const auto st = analysis::makeDepthStudy(s, ids);
  ASSERT_EQ(st.rows.size(), 3u);
  EXPECT_EQ(st.rows[0].scheme, "lns");  // ordered by validation loss
  EXPECT_EQ(st.rows[1].scheme, "post_ln");
  EXPECT_EQ(st.rows[2].scheme, "pre_ln");
  EXPECT_EQ(st.rows[0].lossRank, 1);
  EXPECT_EQ(st.rows[2].lossRank, 3);
  EXPECT_EQ(st.rows[0].displayName, model::schemeDisplayName("lns"));

  const auto& pre = rowOf(st, "pre_ln");
  ASSERT_TRUE(pre.pruneDeepQuarter);
  EXPECT_NEAR(pre.pruneDeepQuarter->mean, 0.2, 1e-6);  // (0.1 + 0.3) / 2, not the shallow 9s
  EXPECT_NEAR(pre.varianceLast->mean, 8, 1e-9);
  EXPECT_NEAR(pre.effectiveLayers->mean, 4, 1e-9);  // E_l >= 0.2 (the low threshold)
  EXPECT_EQ(rowOf(st, "lns").depthRank, 1);         // 1.5
  EXPECT_EQ(rowOf(st, "post_ln").depthRank, 2);     // 0.6
  EXPECT_EQ(pre.depthRank, 3);                      // 0.2
  EXPECT_EQ(rowOf(st, "post_ln").effectiveLayers->mean, 7);
  ASSERT_EQ(pre.varianceProfile.size(), 8u);
  EXPECT_DOUBLE_EQ(pre.varianceProfile[2], 3);
  // Runs of 20 updates, one seed each: the study says so (test_depth_study_ties.cpp); nothing
  // about the selection itself (one shape).
  for (const auto& n : st.notes) EXPECT_EQ(n.find("different shapes"), std::string::npos) << n;
}

TEST(DepthStudy, TwoSeedsGiveAMeanWithAMinMaxBand) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  const std::vector<float> var = {1, 2, 3, 4};
  addRun(s, {"lns", 1, 3.0, var, {0, 0, 0, 1.0f}, {}}, "study 1");
  addRun(s, {"lns", 2, 3.4, var, {0, 0, 0, 3.0f}, {}}, "study 2");
  addRun(s, {"pre_ln", 1, 3.1, var, {0, 0, 0, 0.5f}, {}}, "study 1");
  addRun(s, {"pre_ln", 2, 3.1, var, {0, 0, 0, 0.5f}, {}}, "study 2");
  std::vector<int64_t> ids;
  for (const auto& r : s.listRuns()) ids.push_back(r.id);
  const auto st = analysis::makeDepthStudy(s, ids);
  EXPECT_EQ(st.maxSeeds, 2);
  const auto& lns = rowOf(st, "lns");
  ASSERT_TRUE(lns.lossVal);
  EXPECT_EQ(lns.lossVal->n, 2);
  EXPECT_NEAR(lns.lossVal->mean, 3.2, 1e-9);
  EXPECT_NEAR(lns.lossVal->min, 3.0, 1e-9);
  EXPECT_NEAR(lns.lossVal->max, 3.4, 1e-9);
  EXPECT_EQ(lns.seeds, (std::vector<int64_t>{1, 2}));
  for (const auto& n : lns.notes) EXPECT_EQ(n.find("same seed"), std::string::npos) << n;
  EXPECT_EQ(lns.lossRank, 1);   // 3.2 ± 0.2 against pre_ln's 3.1: not told apart
  EXPECT_TRUE(lns.lossTied);
  EXPECT_EQ(lns.depthRank, 1);  // deep quarter (1 layer of 4): mean of 1 and 3
  EXPECT_NEAR(lns.pruneDeepQuarter->mean, 2.0, 1e-6);
  EXPECT_EQ(analysis::studyCell(lns.lossVal), "3.2 [3, 3.4]");
  EXPECT_EQ(analysis::studyCell(rowOf(st, "pre_ln").pruneDeepQuarter), "0.5 [0.5, 0.5]");
  const auto j = analysis::studyJson(st);
  EXPECT_NEAR(j["schemes"][1]["loss_val"]["sd"].get<double>(), 0.2828427, 1e-6);
  EXPECT_EQ(j["schemes"][1]["loss_val"]["n"], 2);
}

TEST(DepthStudy, TwoRunsOfOneSeedAreNotCalledASeedBand) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  const int64_t a = addRun(s, {"lns", 1, 3.0, {1, 2, 3, 4}, {0, 0, 0, 1.0f}, {}}, "study 1");
  const int64_t b = addRun(s, {"lns", 1, 3.2, {1, 2, 3, 4}, {0, 0, 0, 1.0f}, {}}, "study 2");
  const auto st = analysis::makeDepthStudy(s, {a, b});
  std::string notes;
  for (const auto& n : rowOf(st, "lns").notes) notes += n;
  EXPECT_NE(notes.find("same seed"), std::string::npos) << notes;
}

TEST(DepthStudy, AMissingProbeGivesADashAndANoteNotACrash) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  const int64_t bare = addRun(s, {"sandwich", 1, 3.5, {}, {}, {}});
  addRun(s, {"lns", 1, 3.0, {1, 2, 3, 4}, {0, 0, 0, 1.0f}, {0.5f, 0.5f, 0.5f, 0.5f}});
  std::vector<int64_t> ids;
  for (const auto& r : s.listRuns()) ids.push_back(r.id);
  const auto st = analysis::makeDepthStudy(s, ids);
  const auto& row = rowOf(st, "sandwich");
  EXPECT_FALSE(row.pruneDeepQuarter);
  EXPECT_FALSE(row.varianceLast);
  EXPECT_EQ(row.depthRank, 0);
  EXPECT_EQ(row.lossRank, 2);
  const auto cells = analysis::studyCells(st);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[1][1], model::schemeDisplayName("sandwich"));
  EXPECT_EQ(cells[1][4], "-");
  EXPECT_EQ(cells[1][5], "-");
  EXPECT_EQ(cells[1][6], "-");
  EXPECT_EQ(cells[1][7], "-");
  EXPECT_EQ(cells[0][6], "4 / 4");
  std::string notes;
  for (const auto& n : row.notes) notes += n + "\n";
  EXPECT_NE(notes.find("run " + std::to_string(bare) +
                       " has no pruning probe (depthlab-cli analyze --run " + std::to_string(bare) +
                       " --probes pruning)"),
            std::string::npos)
      << notes;
  EXPECT_THROW(analysis::makeDepthStudy(s, {bare + 100}), store::StoreError);
}

TEST(DepthStudy, APruningRowOfExactZerosIsNamedAsSuspect) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  const int64_t zeros = addRun(s, {"post_ln", 1, 3.0, {1, 2, 3, 4}, {0, 0, 0, 0}, {}});
  addRun(s, {"lns", 1, 3.0, {1, 2, 3, 4}, {0.1f, 0, 0, 0}, {}});
  const auto st = analysis::makeDepthStudy(s, {zeros, zeros + 1});
  std::string notes;
  for (const auto& n : rowOf(st, "post_ln").notes) notes += n;
  EXPECT_NE(notes.find("run " + std::to_string(zeros) +
                       ": removing any layer changed the probe loss by exactly 0"),
            std::string::npos)
      << notes;
  for (const auto& n : rowOf(st, "lns").notes) {  // one layer that matters: a real measurement
    EXPECT_EQ(n.find("exactly 0"), std::string::npos) << n;
  }
}

// A DyT run's zeros are explained by saturation; a run far behind the best is named untrained,
// the others are not.
TEST(DepthStudy, DytZerosPointAtSaturationAndAnUntrainedRunIsNamed) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  const int64_t dyt = addRun(s, {"dyt", 1, 3.03, {1, 2, 3, 4}, {0, 0, 0, 0}, {}});
  addRun(s, {"lns", 1, 1.60, {1, 2, 3, 4}, {0.1f, 0, 0, 0}, {}});
  addRun(s, {"pre_ln", 1, 1.95, {1, 2, 3, 4}, {0.1f, 0, 0, 0}, {}});  // 0.35 behind: trained
  const auto st = analysis::makeDepthStudy(s, {dyt, dyt + 1, dyt + 2});
  std::string notes;
  for (const auto& n : rowOf(st, "dyt").notes) notes += n + "\n";
  EXPECT_NE(notes.find("see its dyt_saturation"), std::string::npos) << notes;
  EXPECT_NE(notes.find("has not learned what the others have"), std::string::npos) << notes;
  for (const char* trained : {"lns", "pre_ln"}) {
    for (const auto& n : rowOf(st, trained).notes) {
      EXPECT_EQ(n.find("has not learned"), std::string::npos) << trained << ": " << n;
    }
  }
}

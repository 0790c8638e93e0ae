// The depth study ranks only what its data separate: schemes whose validation losses lie within
// the seeds' standard error share a rank ("=k"), a single run's deep-quarter pruning loss carries
// the error of its per-layer deltas (printed "± se") and ties within it, and the notes say when
// the runs are too short to rank or rest on one seed.
#include <gtest/gtest.h>

#include "analysis/depth_study.h"
#include "experiment/experiment_config.h"
#include "store/metric_catalogue.h"
#include "support/model_fixtures.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

// A run of `scheme` at `seed` that trained `steps` updates, with its validation loss and (when
// given) pruning deltas and their standard errors over 4 layers.
int64_t addRun(store::RunStore& s, const std::string& scheme, int64_t seed, double lossVal,
               int64_t steps, std::vector<float> prune = {}, std::vector<float> pruneSe = {}) {
  auto c = test::smallConfig(4);
  c.schemes = {scheme};
  store::NewRun nr;
  nr.name = scheme + " " + std::to_string(seed);
  nr.groupName = "g" + std::to_string(seed);
  nr.scheme = scheme;
  nr.seed = seed;
  nr.configJson = experiment::toJson(c).dump();
  const int64_t id = s.createRun(nr);
  store::WriteBatch b;
  b.scalar(steps - 1, metrics::kLossTrain, lossVal + 0.1);
  b.scalar(steps, metrics::kLossVal, lossVal);
  if (!prune.empty()) b.layer(steps, metrics::kPruneDelta, prune);
  if (!pruneSe.empty()) b.layer(steps, metrics::kPruneDeltaError, pruneSe);
  s.write(id, b);
  return id;
}

const analysis::StudyRow& rowOf(const analysis::DepthStudy& st, const std::string& scheme) {
  for (const auto& r : st.rows) {
    if (r.scheme == scheme) return r;
  }
  throw std::runtime_error("no row for " + scheme);
}

bool anyNote(const analysis::DepthStudy& st, const std::string& text) {
  for (const auto& n : st.notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST(DepthStudyTies, LossesWithinTheSeedsErrorShareARank) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  std::vector<int64_t> ids;
  for (int64_t seed : {1, 2, 3}) {  // pre_ln and lns overlap; dyt is far above both
    ids.push_back(addRun(s, "pre_ln", seed, 3.040 + 0.002 * seed, 5000));
    ids.push_back(addRun(s, "lns", seed, 3.041 + 0.002 * seed, 5000));
    ids.push_back(addRun(s, "dyt", seed, 3.5 + 0.002 * seed, 5000));
  }
  const auto st = analysis::makeDepthStudy(s, ids);
  EXPECT_EQ(rowOf(st, "pre_ln").lossRank, 1);
  EXPECT_EQ(rowOf(st, "lns").lossRank, 1);  // within the error: not "2"
  EXPECT_TRUE(rowOf(st, "pre_ln").lossTied);
  EXPECT_TRUE(rowOf(st, "lns").lossTied);
  EXPECT_EQ(rowOf(st, "dyt").lossRank, 3);
  EXPECT_FALSE(rowOf(st, "dyt").lossTied);
  const auto cells = analysis::studyCells(st);
  EXPECT_EQ(cells[0][0], "=1");
  EXPECT_EQ(cells[2][0], "3");
  EXPECT_FALSE(anyNote(st, "too short"));
  EXPECT_FALSE(anyNote(st, "one seed"));
}

TEST(DepthStudyTies, OneRunsPruningErrorTiesWhatItCannotSeparateAndIsPrinted) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  const std::vector<float> se(4, 0.004f);  // the deep quarter is layer 4: its se 0.004
  const auto a = addRun(s, "pre_ln", 1, 3.0, 40, {1, 1, 1, 0.0100f}, se);
  const auto b = addRun(s, "lns", 1, 3.1, 40, {1, 1, 1, 0.0109f}, se);   // +0.0009: within
  const auto c = addRun(s, "post_ln", 1, 3.2, 40, {1, 1, 1, 0.0500f}, se);  // well apart
  const auto st = analysis::makeDepthStudy(s, {a, b, c});
  EXPECT_EQ(rowOf(st, "post_ln").depthRank, 1);
  EXPECT_FALSE(rowOf(st, "post_ln").depthTied);
  EXPECT_EQ(rowOf(st, "lns").depthRank, 2);
  EXPECT_EQ(rowOf(st, "pre_ln").depthRank, 2);
  EXPECT_TRUE(rowOf(st, "pre_ln").depthTied);
  ASSERT_TRUE(rowOf(st, "lns").pruneDeepQuarter);
  EXPECT_NEAR(rowOf(st, "lns").pruneDeepQuarter->se, 0.004, 1e-6);
  const auto cells = analysis::studyCells(st);
  EXPECT_NE(cells[0][5].find("± 0.004"), std::string::npos) << cells[0][5];
  // 40 updates of one seed: the study says it cannot rank yet.
  EXPECT_TRUE(anyNote(st, "40 updates: too short to rank"));
  EXPECT_TRUE(anyNote(st, "one seed per scheme"));
}

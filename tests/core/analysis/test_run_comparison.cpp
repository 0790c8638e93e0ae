// Config diffs, seed groups, the results table (CSV, LaTeX with bold best) and depth scaling.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/run_comparison.h"
#include "experiment/presets.h"

using namespace depthlab;

namespace {
int64_t addRun(store::RunStore& s, const std::string& scheme, int depth, int64_t seed,
               double valLoss) {
  auto c = *experiment::presetConfig("cpu-demo");
  c.model.nLayers = depth;
  c.run.seed = seed;
  c.schemes = {scheme};
  store::NewRun nr;
  nr.name = scheme + std::to_string(depth) + "s" + std::to_string(seed);
  nr.scheme = scheme;
  nr.configJson = experiment::toJson(c).dump();
  int64_t id = s.createRun(nr);
  if (valLoss > 0) {
    store::WriteBatch b;
    b.scalar(600, "loss_val", valLoss);
    s.write(id, b);
  }
  return id;
}
}  // namespace

TEST(RunComparison, ConfigDiffShowsOnlyDifferingKeys) {
  auto s = store::RunStore::open(":memory:");
  addRun(s, "pre_ln", 12, 1, 2.0);
  addRun(s, "lns", 24, 1, 1.9);
  auto diff = analysis::configDiff(s.listRuns());
  EXPECT_TRUE(diff.count("model.nLayers"));
  EXPECT_TRUE(diff.count("scheme"));
  EXPECT_FALSE(diff.count("model.dModel"));
  EXPECT_EQ(diff["model.nLayers"], (std::vector<std::string>{"12", "24"}));
}

TEST(RunComparison, SeedGroupsTableAndDepthScaling) {
  auto s = store::RunStore::open(":memory:");
  for (int64_t seed : {1, 2}) {
    addRun(s, "pre_ln", 12, seed, 2.00 + 0.01 * seed);
    addRun(s, "lns", 12, seed, 1.95 + 0.01 * seed);
    addRun(s, "pre_ln", 24, seed, 1.98 + 0.01 * seed);
    addRun(s, "lns", 24, seed, 1.90 + 0.01 * seed);
  }
  addRun(s, "post_ln", 24, 1, -1);  // no validation loss yet
  auto groups = analysis::seedGroups(s, s.listRuns());
  ASSERT_EQ(groups.size(), 5u);
  // In the catalogue's order (Pre-LN before LNS, as every view lists them), shallow first.
  std::vector<std::string> order;
  for (const auto& g : groups) order.push_back(g.scheme + std::to_string(g.depth));
  EXPECT_EQ(order,
            (std::vector<std::string>{"pre_ln12", "pre_ln24", "lns12", "lns24", "post_ln24"}));
  for (const auto& g : groups) {
    if (g.scheme != "post_ln") {
      EXPECT_EQ(g.runIds.size(), 2u);
    }
  }
  auto table = analysis::resultsTable(groups);
  EXPECT_EQ(table.rows, (std::vector<std::string>{"pre_ln", "lns", "post_ln"}));
  ASSERT_EQ(table.columns.size(), 2u);
  EXPECT_NEAR(*table.ppl[1][1], (std::exp(1.91) + std::exp(1.92)) / 2, 1e-9);
  EXPECT_EQ(table.n[1][1], 2);
  EXPECT_FALSE(table.ppl[2][1]);
  const auto latex = table.toLatex();
  EXPECT_NE(latex.find("\\begin{tabular}"), std::string::npos);
  EXPECT_NE(latex.find("\nPre-LN & "), std::string::npos) << latex;  // its display name
  char best[32];
  std::snprintf(best, sizeof(best), "\\textbf{%.2f}", *table.ppl[1][0]);
  EXPECT_NE(latex.find(best), std::string::npos) << latex;
  EXPECT_NE(latex.find("--"), std::string::npos);
  EXPECT_NE(table.toCsv().find("scheme,"), std::string::npos);

  auto scaling = analysis::depthScaling(groups);
  ASSERT_EQ(scaling["lns"].size(), 2u);
  EXPECT_EQ(scaling["lns"][1].depth, 24);
  auto gain = analysis::lnsGainPercent(scaling);
  EXPECT_GT(gain[24], gain[12]);  // the gain grows with depth in this made-up data
  EXPECT_GT(gain[12], 0);
}

// Two groups of one scheme and size that differ in sequence length (Compare warns about them)
// share one results cell with every run counted; the last group had replaced the first (n=1).
TEST(RunComparison, GroupsOfOneSchemeAndSizeShareTheirResultsCellWithEveryRunCounted) {
  analysis::SeedGroup a, b;
  a.scheme = b.scheme = "lns";
  a.depth = b.depth = 24;
  a.width = b.width = 64;
  a.params = b.params = 1220000;
  a.finalValLoss = {2.0};
  b.finalValLoss = {3.0};
  const auto t = analysis::resultsTable({a, b});
  ASSERT_EQ(t.rows.size(), 1u);
  ASSERT_EQ(t.columns.size(), 1u);
  EXPECT_EQ(t.n[0][0], 2);
  ASSERT_TRUE(t.ppl[0][0].has_value());
  EXPECT_NEAR(*t.ppl[0][0], (std::exp(2.0) + std::exp(3.0)) / 2, 1e-9);
}

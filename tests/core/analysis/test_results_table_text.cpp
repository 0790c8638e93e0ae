// The results table written out survives any run or scheme name (quoted CSV cells, escaped
// LaTeX); schemes go by their display names, the ones the figure window kept in the database
// first.
#include <gtest/gtest.h>

#include "analysis/run_comparison.h"
#include "experiment/experiment_config.h"
#include "experiment/presets.h"
#include "model/scheme_catalogue.h"
#include "store/run_store.h"

using namespace depthlab::analysis;
TEST(ResultsTableText, TheResultsTableQuotesAndEscapesItsNames) {
  ResultsTable t;
  t.columns = {"1.2M (L=24)", "a,b"};
  t.rows = {"50%_x", "say \"hi\""};
  t.ppl = {{2.0, 3.0}, {std::nullopt, 4.0}};
  t.n = {{1, 1}, {0, 1}};
  EXPECT_EQ(t.toCsv(), "scheme,1.2M (L=24),\"a,b\"\n50%_x,2,3\n\"say \"\"hi\"\"\",,4\n");
  const auto latex = t.toLatex();
  EXPECT_NE(latex.find("\n50\\%\\_x & \\textbf{2.00} & \\textbf{3.00} \\\\"), std::string::npos)
      << latex;
  EXPECT_NE(latex.find("& a,b \\\\"), std::string::npos) << latex;
}

TEST(ResultsTableText, SchemesGoByTheirDisplayNamesAndTheStoresNamesWin) {
  EXPECT_EQ(depthlab::model::schemeDisplayName("pre_ln"), "Pre-LN");
  EXPECT_EQ(depthlab::model::schemeDisplayName("lns"), "LNS");
  EXPECT_EQ(depthlab::model::schemeDisplayName("a_new_one"), "a_new_one");
  EXPECT_EQ(schemeName({{"scheme:lns", "LNS (ours)"}}, "lns"), "LNS (ours)");
  EXPECT_EQ(schemeName({{"run:2", "baseline"}}, "pre_ln"), "Pre-LN");
}

TEST(ResultsTableText, TheLatexResultsTablePrintsTheNamesTheWindowShows) {
  auto s = depthlab::store::RunStore::open(":memory:");
  for (const char* scheme : {"pre_ln", "lns"}) {
    auto c = *depthlab::experiment::presetConfig("cpu-demo");
    c.schemes = {scheme};
    depthlab::store::NewRun nr;
    nr.name = scheme;
    nr.scheme = scheme;
    nr.configJson = depthlab::experiment::toJson(c).dump();
    const int64_t id = s.createRun(nr);
    depthlab::store::WriteBatch b;
    b.scalar(600, "loss_val", 2.0);
    s.write(id, b);
  }
  s.setDisplayName("scheme:lns", "LNS (ours)");  // as the figure window keeps it
  const auto latex = resultsTable(seedGroups(s, s.listRuns())).toLatex();
  EXPECT_NE(latex.find("\nPre-LN & "), std::string::npos) << latex;
  EXPECT_NE(latex.find("\nLNS (ours) & "), std::string::npos) << latex;
  EXPECT_EQ(latex.find("pre\\_ln"), std::string::npos) << latex;
  s.setDisplayName("scheme:lns", "");  // back to the default spelling
  EXPECT_EQ(s.displayNames().size(), 0u);
  EXPECT_NE(resultsTable(seedGroups(s, s.listRuns())).toLatex().find("\nLNS & "),
            std::string::npos);
}

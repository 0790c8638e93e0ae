// Tables written out survive any run or scheme name: CSV cells quoted by RFC 4180 and LaTeX
// text with every special character escaped (a run named "a,b" or "50%_x" once broke both);
// schemes go by their display names, the ones the figure window kept in the database first.
#include <gtest/gtest.h>

#include "analysis/run_comparison.h"
#include "analysis/table_text.h"
#include "experiment/experiment_config.h"
#include "experiment/presets.h"
#include "store/run_store.h"

using namespace depthlab::analysis;

TEST(TableText, CsvCellsAreQuotedWhenTheyMustBe) {
  EXPECT_EQ(csvCell("pre_ln"), "pre_ln");
  EXPECT_EQ(csvCell("a,b"), "\"a,b\"");
  EXPECT_EQ(csvCell("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csvCell("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csvCell(" padded"), "\" padded\"");
  EXPECT_EQ(csvCell(""), "");
}

TEST(TableText, LatexTextEscapesEverySpecialCharacter) {
  EXPECT_EQ(latexText("50%_x"), "50\\%\\_x");
  EXPECT_EQ(latexText("a&b#c$d"), "a\\&b\\#c\\$d");
  EXPECT_EQ(latexText("{x}"), "\\{x\\}");
  EXPECT_EQ(latexText("~^\\"), "\\textasciitilde{}\\textasciicircum{}\\textbackslash{}");
}

TEST(TableText, TheResultsTableQuotesAndEscapesItsNames) {
  ResultsTable t;
  t.columns = {"1.2M (L=24)", "a,b"};
  t.rows = {"50%_x", "say \"hi\""};
  t.ppl = {{2.0, 3.0}, {std::nullopt, 4.0}};
  t.n = {{1, 1}, {0, 1}};
  EXPECT_EQ(t.toCsv(), "scheme,1.2M (L=24),\"a,b\"\n50%_x,2,3\n\"say \"\"hi\"\"\",,4\n");
  const auto latex = t.toLatex();
  EXPECT_NE(latex.find("\n50\\%\\_x & \\textbf{2.00} & \\textbf{3.00} \\\\"), std::string::npos) << latex;
  EXPECT_NE(latex.find("& a,b \\\\"), std::string::npos) << latex;
}

TEST(TableText, SchemesGoByTheirDisplayNamesAndTheStoresNamesWin) {
  EXPECT_EQ(defaultSchemeName("pre_ln"), "Pre-LN");
  EXPECT_EQ(defaultSchemeName("lns"), "LNS");
  EXPECT_EQ(defaultSchemeName("a_new_one"), "a_new_one");
  EXPECT_EQ(schemeName({{"scheme:lns", "LNS (ours)"}}, "lns"), "LNS (ours)");
  EXPECT_EQ(schemeName({{"run:2", "baseline"}}, "pre_ln"), "Pre-LN");
}

TEST(TableText, TheLatexResultsTablePrintsTheNamesTheWindowShows) {
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
  EXPECT_NE(resultsTable(seedGroups(s, s.listRuns())).toLatex().find("\nLNS & "), std::string::npos);
}

// Tables written out survive any run or scheme name: CSV cells quoted by RFC 4180 and LaTeX
// text with every special character escaped (a run named "a,b" or "50%_x" once broke both).
#include <gtest/gtest.h>

#include "util/table_text.h"

using namespace depthlab::util;

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

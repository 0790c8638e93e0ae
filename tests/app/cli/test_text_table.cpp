// The terminal table of `runs list`: columns as wide as their widest cell, nothing cut, UTF-8
// names lined up by code points; `runs list` showing a long run name whole and `runs show`
// the config one section a line.
#include <gtest/gtest.h>

#include <sstream>

#include "support/build_paths.h"
#include "support/temp_dir.h"
#include "text_table.h"

using namespace depthlab;

TEST(TextTable, ColumnsFitTheirWidestCellAndNothingIsCut) {
  const std::string t = cli::formatTextTable(
      {"ID", "NAME", "TAGS"}, {{"1", "cpu-demo-20261204-151322 pre_ln", "a,b"}, {"12", "x", ""}});
  EXPECT_EQ(t,
            "ID  NAME                             TAGS\n"
            "1   cpu-demo-20261204-151322 pre_ln  a,b\n"
            "12  x\n");
}

TEST(TextTable, WidthsCountCodePointsNotBytes) {
  EXPECT_EQ(cli::displayWidth("d²"), 2u);
  const std::string t = cli::formatTextTable({"NAME", "X"}, {{"Æsir²", "1"}, {"plain", "2"}});
  EXPECT_EQ(t,
            "NAME   X\n"
            "Æsir²  1\n"
            "plain  2\n");
}

TEST(RunsList, ShowsALongRunNameWholeAndRunsShowReadsTheConfigBySection) {
  test::TempDir dir;
  const std::string db = " --db " + dir.file("runs.db");
  std::string text;
  for (int i = 0; text.size() < 20000; ++i)
    text += "the curse of depth " + std::to_string(i % 31) + "\n";
  test::writeFile(dir.file("text.txt"), text);
  std::string out;
  ASSERT_EQ(test::runCommand(depthlab::test::cliPath() + db +
                                 " train --preset tiny --scheme pre_ln --steps 2 --name "
                                 "a-rather-long-group-name-20261204 --corpus " +
                                 dir.file("text.txt") + " --quiet 2>&1",
                             &out),
            0)
      << out;
  ASSERT_EQ(test::runCommand(depthlab::test::cliPath() + db + " runs list 2>&1", &out), 0);
  EXPECT_NE(out.find("a-rather-long-group-name-20261204 pre_ln"), std::string::npos) << out;
  EXPECT_NE(out.find("  a-rather-long-group-name-20261204  "), std::string::npos) << out;
  // runs show: the config one section a line, wrapped within 100 columns, not one JSON blob.
  ASSERT_EQ(test::runCommand(depthlab::test::cliPath() + db + " runs show 1 2>&1", &out), 0);
  EXPECT_NE(out.find("\n    model     "), std::string::npos) << out;
  EXPECT_NE(out.find("nLayers=4"), std::string::npos) << out;
  EXPECT_NE(out.find("\n  trained  "), std::string::npos) << out;  // its training time
  EXPECT_EQ(out.find("{\"data\""), std::string::npos) << out;
  std::istringstream lines(out);
  for (std::string l; std::getline(lines, l);) {
    if (l.rfind("  checkpoint", 0) != 0) {
      EXPECT_LE(l.size(), 100u) << l;
    }
  }
}

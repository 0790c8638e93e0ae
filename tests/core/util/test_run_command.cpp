// External programs run from an argument vector: shell syntax in an argument is just text,
// stdin comes from a file, stderr is discarded, merged or captured, and exit codes come back.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/temp_dir.h"
#include "util/run_command.h"

using namespace depthlab;

TEST(RunProgram, ShellSyntaxInAnArgumentIsNeverRun) {
  test::TempDir dir;
  const std::string marker = dir.file("pwned");
  auto r = util::runProgram({"echo", "x $(touch " + marker + ") `touch " + marker + "`; touch " + marker});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.output.find("$(touch"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(RunProgram, StdinStderrAndExitCodes) {
  test::TempDir dir;
  test::writeFile(dir.file("in.txt"), "hello\n");
  util::CommandOptions o;
  o.stdinFile = dir.file("in.txt");
  EXPECT_EQ(util::runProgram({"cat"}, o).output, "hello\n");
  o = {};
  o.stderrMode = util::Stderr::Capture;
  auto r = util::runProgram({"sh", "-c", "echo out; echo err >&2; exit 3"}, o);
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.output, "out\n");
  EXPECT_EQ(r.errors, "err\n");
  o.stderrMode = util::Stderr::Merge;
  EXPECT_EQ(util::runProgram({"sh", "-c", "echo err >&2"}, o).output, "err\n");
  EXPECT_EQ(util::runProgram({"sh", "-c", "echo err >&2"}).output, "");  // discarded
  EXPECT_EQ(util::runProgram({"/nonexistent/program"}).status, 127);
  EXPECT_TRUE(util::programExists("sh"));
  EXPECT_FALSE(util::programExists("no-such-program-depthlab"));
}

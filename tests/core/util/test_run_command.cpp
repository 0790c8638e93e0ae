// External programs run from an argument vector: shell syntax in an argument is just text,
// stdin comes from a file, stderr is discarded, merged or captured, and exit codes come back.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

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

// The child sees no descriptor of ours above stderr, however high its number (the fork-based
// version closed only those below 1024), and a program that cannot start leaks no pipe.
TEST(RunProgram, TheChildInheritsNoHighDescriptorAndAFailedStartLeaksNone) {
  test::TempDir dir;
  test::writeFile(dir.file("f"), "x");
  const int fd = open(dir.file("f").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  const int high = fcntl(fd, F_DUPFD, 2000);  // above 1024
  ASSERT_GE(high, 2000);
  auto r = util::runProgram({"sh", "-c", "ls /proc/self/fd"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.output.find(std::to_string(high)), std::string::npos) << r.output;
  close(high);
  close(fd);
  auto count = [] {
    int n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
    return n;
  };
  const int before = count();
  for (int i = 0; i < 20; ++i) EXPECT_EQ(util::runProgram({"/nonexistent/program"}).status, 127);
  util::CommandOptions missing;
  missing.stdinFile = dir.file("no-such-input");
  EXPECT_EQ(util::runProgram({"cat"}, missing).status, 126);
  EXPECT_EQ(count(), before);
}

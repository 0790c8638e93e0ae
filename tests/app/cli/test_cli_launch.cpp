// The command line's subcommand, found before CLI11 parses it, and which subcommands are
// restarted for OpenBLAS's kernels (those that compute) and which are not (a second LibTorch
// load, ~0.5 s, for `runs list`).
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli_launch.h"
#include "support/build_paths.h"
#include "support/temp_dir.h"

using depthlab::cli::computingSubcommands;
using depthlab::cli::readingSubcommands;
using depthlab::cli::subcommandComputes;
using depthlab::cli::subcommandIndex;

namespace {

// argv as main() gets it, from a list of words (the first is the program).
struct Argv {
  explicit Argv(std::vector<std::string> w) : words(std::move(w)) {
    for (auto& s : words) ptrs.push_back(s.data());
    ptrs.push_back(nullptr);
  }
  int argc() const { return static_cast<int>(words.size()); }
  char** argv() { return ptrs.data(); }
  std::vector<std::string> words;
  std::vector<char*> ptrs;
};

}  // namespace

TEST(CliLaunch, TheSubcommandComesAfterTheGlobalOptionsAndTheDbIsKept) {
  Argv a({"depthlab-cli", "--db", "/tmp/x.db", "--json", "runs", "list"});
  std::string db;
  EXPECT_EQ(subcommandIndex(a.argc(), a.argv(), &db), 4);
  EXPECT_EQ(db, "/tmp/x.db");
  Argv b({"depthlab-cli", "--db=/data/r.db", "export", "--runs", "1"});
  EXPECT_EQ(subcommandIndex(b.argc(), b.argv(), &db), 2);
  EXPECT_EQ(db, "/data/r.db");
  Argv none({"depthlab-cli", "--json"});
  EXPECT_EQ(subcommandIndex(none.argc(), none.argv()), 2);
  Argv dangling({"depthlab-cli", "--db"});  // CLI11 answers this one
  EXPECT_EQ(subcommandIndex(dangling.argc(), dangling.argv()), 1);
}

TEST(CliLaunch, OnlyCommandsThatComputeAreRestartedForOpenBlasKernels) {
  for (const char* cmd :
       {"train", "resume", "analyze", "eval", "import-hf", "export-hf", "bench"}) {
    Argv a({"depthlab-cli", "--db", "r.db", cmd, "--preset", "tiny"});
    EXPECT_TRUE(subcommandComputes(a.argc(), a.argv())) << cmd;
  }
  for (const char* cmd :
       {"runs", "report", "presets", "corpus", "export", "--help", "--version", "trian"}) {
    Argv a({"depthlab-cli", "--json", cmd, "list"});
    EXPECT_FALSE(subcommandComputes(a.argc(), a.argv())) << cmd;
  }
  Argv bare({"depthlab-cli"});
  EXPECT_FALSE(subcommandComputes(bare.argc(), bare.argv()));
  // A global option's value is not a subcommand: `--db train` names a file called "train".
  Argv db({"depthlab-cli", "--db", "train", "runs", "list"});
  EXPECT_FALSE(subcommandComputes(db.argc(), db.argv()));
}

TEST(CliLaunch, EverySubcommandOfTheCliIsClassifiedOnce) {
  std::string help;
  ASSERT_EQ(depthlab::test::runCommand(depthlab::test::cliPath() + " --help", &help), 0) << help;
  std::istringstream lines(help.substr(help.find("Subcommands:")));
  std::string line;
  std::getline(lines, line);  // "Subcommands:"
  int listed = 0;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string name;
    if (line.rfind("  ", 0) != 0 || !(words >> name)) continue;
    ++listed;
    EXPECT_NE(computingSubcommands().count(name), readingSubcommands().count(name))
        << "'" << name
        << "' must be in exactly one of computingSubcommands() and readingSubcommands()";
  }
  EXPECT_EQ(static_cast<size_t>(listed),
            computingSubcommands().size() + readingSubcommands().size())
      << help;
}

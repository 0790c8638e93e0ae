// The README is a guide whose commands work: every line of its ```sh blocks is run or checked.
// `make X` lines must name a Makefile target; `cli=...` must name the CLI's build path;
// `$cli ...` / `depthlab-cli ...` lines run against a temporary database and data folder with the
// built binary (a `train` line with --steps lowered to kTrainSteps, so the test stays short);
// `depthlab ...` (GUI) lines run offscreen with their --screenshot moved into the temporary
// folder. A line of any other kind fails: a new command needs a way to be run here first.
// Also: every relative link of README.md and docs/*.md points to a file that exists.
// Does not check what the commands print beyond their exit status and the files they promise.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/build_paths.h"
#include "support/temp_dir.h"

using depthlab::test::readFile;
using depthlab::test::runCommand;
using depthlab::test::TempDir;

namespace fs = std::filesystem;

namespace {

constexpr int kTrainSteps = 30;       // the tour's 600 steps take minutes; 30 give every panel data
constexpr int kCommandSeconds = 240;  // past it a command fails (a window waiting on a dialog)
const std::string kCliPath = "build/release/app/depthlab-cli";  // as the README writes them
const std::string kGuiPath = "build/release/app/depthlab";

// The shell lines of a Markdown file's ```sh / ```bash blocks, continuations joined, comments
// (a # at a word's start, outside quotes) and blank lines dropped.
std::vector<std::string> shellLines(const std::string& markdown) {
  std::vector<std::string> lines;
  std::istringstream in(markdown);
  std::string line, pending;
  bool inShell = false, inBlock = false;
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0) {
      inShell = !inBlock && (line == "```sh" || line == "```bash" || line == "```shell");
      inBlock = !inBlock;
      continue;
    }
    if (!inShell) continue;
    char quote = 0;
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (quote) {
        if (c == quote) quote = 0;
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == '#' && (i == 0 || line[i - 1] == ' ')) {
        line.resize(i);
        break;
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (!line.empty() && line.back() == '\\') {
      pending += line.substr(0, line.size() - 1) + " ";
      continue;
    }
    line = pending + line;
    pending.clear();
    if (line.find_first_not_of(' ') != std::string::npos) lines.push_back(line);
  }
  return lines;
}

bool startsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// The value of --opt in a command line ("" when absent).
std::string optionValue(const std::string& line, const std::string& opt) {
  std::smatch m;
  if (std::regex_search(line, m, std::regex(opt + "[ =]([^ ]+)"))) return m[1];
  return "";
}

// A train line with its --steps set to kTrainSteps (replaced, or added).
std::string withFewSteps(const std::string& line) {
  const std::string steps = "--steps " + std::to_string(kTrainSteps);
  std::regex given("--steps[ =][0-9]+");
  if (std::regex_search(line, given)) return std::regex_replace(line, given, steps);
  return line + " " + steps;
}

bool isMakeTarget(const std::string& makefile, const std::string& target) {
  return std::regex_search(makefile, std::regex("(^|\\n)" + target + ":"));
}

// Every relative link target of a Markdown file ([text](target), images too), anchors cut.
std::vector<std::string> relativeLinks(const std::string& markdown) {
  std::vector<std::string> out;
  std::regex link("\\]\\(([^)\\s]+)\\)");
  for (std::sregex_iterator it(markdown.begin(), markdown.end(), link), end; it != end; ++it) {
    std::string target = (*it)[1];
    if (startsWith(target, "http:") || startsWith(target, "https:") ||
        startsWith(target, "mailto:") || startsWith(target, "#")) {
      continue;
    }
    out.push_back(target.substr(0, target.find('#')));
  }
  return out;
}

// The shell prefix of every README command: in `dir`, with a data folder of its own (the
// default corpus copied in when this machine has it, else the CLI prepares it there), a database
// and window settings of its own, the offscreen platform, and $cli naming the built CLI.
std::string sandboxShell(const TempDir& dir, const std::string& cli) {
  const std::string data = dir.file("data");
  fs::create_directories(data + "/depthlab/corpora");
  const char* xdg = std::getenv("XDG_DATA_HOME");
  const char* home = std::getenv("HOME");
  const fs::path realData =
      xdg && *xdg ? fs::path(xdg) : fs::path(home ? home : ".") / ".local/share";
  const fs::path kjv = realData / "depthlab/corpora/kjv.txt";
  if (fs::exists(kjv)) fs::copy_file(kjv, data + "/depthlab/corpora/kjv.txt");
  return "cd '" + dir.path() + "' && export XDG_DATA_HOME='" + data + "' XDG_CONFIG_HOME='" +
         dir.file("config") + "' DEPTHLAB_DB='" + dir.file("lab.db") +
         "' QT_QPA_PLATFORM=offscreen cli='" + cli + "' && ";
}

}  // namespace

TEST(ReadmeCommands, ShellLinesAreSplitJoinedAndStrippedOfComments) {
  const std::string md =
      "text\n```sh\ncli=build/x   # the binary\n$cli export --label lns=\"LNS # 1\" \\\n"
      "   --out f.pdf\n\n# a comment line\n```\n```json\n{\"a\": 1}\n```\n";
  const auto lines = shellLines(md);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "cli=build/x");
  EXPECT_EQ(lines[1], "$cli export --label lns=\"LNS # 1\"     --out f.pdf");
  EXPECT_EQ(withFewSteps("$cli train --preset p"), "$cli train --preset p --steps 30");
  EXPECT_EQ(withFewSteps("$cli train --steps 600 --x"), "$cli train --steps 30 --x");
}

TEST(ReadmeCommands, EveryCommandInTheReadmeRunsOrNamesAMakeTarget) {
  const std::string source = depthlab::test::sourceDir();
  const std::string readme = readFile(source + "/README.md");
  const std::string makefile = readFile(source + "/Makefile");
  const auto lines = shellLines(readme);
  ASSERT_GE(lines.size(), 4u) << "README.md has no ```sh commands";
  ASSERT_TRUE(startsWith(lines[0], "make run") && startsWith(lines[1], "make test"))
      << "the README opens with the two commands, make run and make test";

  if (depthlab::test::guiPath().empty())
    GTEST_SKIP() << "built without the window (DEPTHLAB_BUILD_GUI=OFF): the tour exports figures "
                    "and screenshots, which need it";
  const std::string cli = depthlab::test::cliPath();
  const std::string gui = depthlab::test::guiPath();
  TempDir dir;
  const std::string env = sandboxShell(dir, cli);
  int ran = 0;
  for (std::string line : lines) {
    SCOPED_TRACE(line);
    if (startsWith(line, "make ")) {
      std::istringstream words(line.substr(5));
      std::string target;
      while (words >> target) {
        EXPECT_TRUE(isMakeTarget(makefile, target)) << "no Makefile target '" << target << "'";
      }
      continue;
    }
    if (startsWith(line, "cli=")) {
      EXPECT_EQ(line, "cli=" + kCliPath) << "the tour's CLI is the Release build's";
      continue;
    }
    if (startsWith(line, kCliPath + " ")) line = "$cli " + line.substr(kCliPath.size() + 1);
    std::string command;
    std::string expectFile;
    if (startsWith(line, "$cli ")) {
      command = line.find(" train ") != std::string::npos ? withFewSteps(line) : line;
      if (line.find(" export ") != std::string::npos) expectFile = optionValue(line, "--out");
    } else if (startsWith(line, kGuiPath + " ")) {
      ASSERT_NE(line.find("--screenshot"), std::string::npos)
          << "a window command here must take --screenshot so that it can run headless";
      command = "'" + gui + "'" + line.substr(kGuiPath.size());
      expectFile = optionValue(line, "--screenshot");
    } else {
      ADD_FAILURE() << "a README command this test cannot run: give it a kind above";
      continue;
    }
    std::string output;
    const std::string limit = "timeout -k 5 " + std::to_string(kCommandSeconds) + " ";
    const int rc = runCommand(env + limit + command, &output);
    EXPECT_EQ(rc, 0) << (rc == 124 ? "ran past the time limit\n" : "") << output;
    if (!expectFile.empty()) {
      const fs::path f = fs::path(dir.path()) / expectFile;
      EXPECT_TRUE(fs::exists(f) && fs::file_size(f) > 0) << expectFile << " not written\n"
                                                         << output;
    }
    ++ran;
  }
  EXPECT_GE(ran, 4) << "the tour trains, reports, exports and shows the window";
}

TEST(ReadmeCommands, EveryRelativeLinkOfTheReadmeAndDocsPointsToAFile) {
  const fs::path source = depthlab::test::sourceDir();
  std::vector<fs::path> files = {source / "README.md"};
  for (const auto& e : fs::directory_iterator(source / "docs")) {
    if (e.path().extension() == ".md") files.push_back(e.path());
  }
  int links = 0;
  for (const auto& file : files) {
    for (const std::string& target : relativeLinks(readFile(file.string()))) {
      EXPECT_TRUE(fs::exists(file.parent_path() / target))
          << file.filename() << " links to a missing " << target;
      ++links;
    }
  }
  EXPECT_GE(links, 10) << "the README links its guides in docs/";
}

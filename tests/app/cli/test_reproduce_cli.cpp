// `reproduce` end to end as a user runs it: the recipes listed; a paper-size recipe refused on a
// CPU and a corpus too small for a recipe's budget refused with what it has and needs (nothing
// created either time); the tiny recipe trained on a .jsonl corpus, killed mid-way with SIGKILL,
// and the same command again resuming the same runs to the end, with the report beside them.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "store/run_store.h"
#include "support/background_process.h"
#include "support/build_paths.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

// `records` one-line JSON documents of ~60-120 bytes, each its own story.
std::string jsonl(int records) {
  std::string out;
  for (int i = 0; i < records; ++i) {
    std::string text = "story " + std::to_string(i) + ": the deep layers " +
                       std::string(static_cast<size_t>(20 + i % 50), "abcdefghij"[i % 10]) +
                       " learn.";
    out += "{\"text\": \"" + text + "\"}\n";
  }
  return out;
}

std::string run(const std::string& args, int* rc) {
  std::string out;
  *rc = test::runCommand(depthlab::test::cliPath() + " " + args + " 2>&1", &out);
  return out;
}

}  // namespace

TEST(ReproduceCli, ListsRecipesAndRefusesWhatCannotWork) {
  test::TempDir dir;
  test::writeFile(dir.file("small.jsonl"), jsonl(100));
  const std::string db = "--db " + dir.file("r.db") + " ";
  int rc = 0;
  std::string out = run(db + "reproduce", &rc);
  EXPECT_EQ(rc, 0) << out;
  for (const char* name :
       {"table1-130m", "table1-1b", "fig4-variance-130m", "quick-71m", "tiny-check"}) {
    EXPECT_NE(out.find(name), std::string::npos) << name << "\n" << out;
  }
  out = run(db + "reproduce table1-130m --corpus " + dir.file("small.jsonl"), &rc);
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("paper-size recipe"), std::string::npos) << out;
  EXPECT_NE(out.find("--device cuda"), std::string::npos) << out;
  out = run(db + "reproduce tiny-check --no-figures --corpus " + dir.file("small.jsonl"), &rc);
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("documents"), std::string::npos) << out;
  EXPECT_NE(out.find("480"), std::string::npos) << out;  // 60 updates x 8 rows
  EXPECT_NE(out.find("--force"), std::string::npos) << out;
  // A one-document corpus for a recipe of document rows: the advice is reproduce's own (--set),
  // and the refusal leaves no token store beside the corpus.
  std::filesystem::create_directories(dir.file("one"));
  test::writeFile(dir.file("one/input.txt"), std::string(20000, 'a') + "\n");
  out = run(db + "reproduce tiny-check --no-figures --corpus " + dir.file("one/input.txt"), &rc);
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("--set data.packing=packed"), std::string::npos) << out;
  for (const auto& e : std::filesystem::directory_iterator(dir.file("one"))) {
    EXPECT_EQ(e.path().filename(), "input.txt") << "left behind: " << e.path();
  }
  out = run(db + "reproduce tiny-check --no-figures --set optim.nope=1 --corpus " +
                dir.file("one/input.txt"),
            &rc);
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("optim.nope"), std::string::npos) << out;
  out = run(db + "reproduce tiny-check --no-figures", &rc);  // the default corpus: one document
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("needs --corpus"), std::string::npos) << out;
  auto s = store::RunStore::open(dir.file("r.db"));
  EXPECT_TRUE(s.listRuns().empty());
}

TEST(ReproduceCli, TheTinyRecipeKilledMidwayResumesToItsReport) {
  test::TempDir dir;
  test::writeFile(dir.file("c4.jsonl"), jsonl(700));
  const std::string cli = depthlab::test::cliPath(), db = dir.file("r.db");
  const std::vector<std::string> args = {cli,
                                         "--db",
                                         db,
                                         "reproduce",
                                         "tiny-check",
                                         "--no-figures",
                                         "--corpus",
                                         dir.file("c4.jsonl"),
                                         "--checkpoint-dir",
                                         dir.file("ck")};
  pid_t pid = test::launchQuiet(args);
  // Killed once both runs have a checkpoint (every 10 updates) and before they end (60).
  bool killedMidway = false;
  for (int i = 0; i < 600; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (waitpid(pid, nullptr, WNOHANG) == pid) break;
    try {
      auto s = store::RunStore::open(db, store::RunStore::Mode::ReadOnly);
      auto runs = s.listRuns();
      if (runs.size() == 2 && !s.checkpoints(runs[0].id).empty() &&
          !s.checkpoints(runs[1].id).empty()) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
        killedMidway = s.run(runs[0].id)->status != store::RunStatus::Finished;
        break;
      }
    } catch (const std::exception&) {}
  }
  ASSERT_TRUE(killedMidway) << "the recipe ended before it could be killed mid-way";
  std::string command;
  for (size_t i = 0; i < args.size(); ++i) command += (i ? " " : "") + args[i];
  std::string out;
  const int rc = test::runCommand(command + " 2>&1", &out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("to resume"), std::string::npos) << out;
  EXPECT_NE(out.find("LNS over Pre-LN"), std::string::npos) << out;
  auto s = store::RunStore::open(db);
  const auto runs = s.listRuns();
  ASSERT_EQ(runs.size(), 2u);  // resumed, not launched again
  for (const auto& r : runs) {
    EXPECT_EQ(r.status, store::RunStatus::Finished) << r.scheme;
    const auto losses = s.scalarSeries(r.id, "loss_train");
    ASSERT_FALSE(losses.empty());
    EXPECT_EQ(losses.back().step, 59) << r.scheme;  // 60 updates, counted from 0
  }
  // Run again, there is nothing to train: it only reports.
  std::string again;
  EXPECT_EQ(test::runCommand(command + " 2>&1", &again), 0) << again;
  EXPECT_NE(again.find("finished"), std::string::npos) << again;
  EXPECT_EQ(store::RunStore::open(db).listRuns().size(), 2u);
}

TEST(ReproduceCli, SetChangesTheRecipeAndSaysItIsNoLongerThePapers) {
  test::TempDir dir;
  std::string text;
  for (int i = 0; text.size() < 400000; ++i)
    text += "the deep layers learn little " + std::to_string(i % 97) + ". ";
  test::writeFile(dir.file("input.txt"), text);  // one document: tiny-check reads one a row
  const std::string db = "--db " + dir.file("r.db") + " ";
  int rc = 0;
  const std::string out =
      run(db + "reproduce tiny-check --no-figures --checkpoint-dir " + dir.file("ck") +
              " --corpus " + dir.file("input.txt") + " --set data.packing=packed --schemes lns",
          &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("not the paper's: data.packing = \"packed\" (the recipe's: \"document\")"),
            std::string::npos)
      << out;
  auto s = store::RunStore::open(dir.file("r.db"));
  ASSERT_EQ(s.listRuns().size(), 1u);
  bool recorded = false;
  for (const auto& e : s.events(s.listRuns().front().id)) {
    recorded =
        recorded || e.message.find("not the paper's recipe: data.packing") != std::string::npos;
  }
  EXPECT_TRUE(recorded);
}

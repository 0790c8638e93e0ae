// `reproduce` end to end as a user runs it: the recipes listed; a paper-size recipe refused on a
// CPU and a corpus too small for a recipe's budget refused with what it has and needs (nothing
// created either time); the tiny recipe trained on a .jsonl corpus, killed mid-way with SIGKILL,
// and the same command again resuming the same runs to the end, with the report beside them.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "store/run_store.h"
#include "support/background_process.h"
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
  *rc = test::runCommand(std::string(DEPTHLAB_CLI_PATH) + " " + args + " 2>&1", &out);
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
  out = run(db + "reproduce tiny-check --no-figures", &rc);  // the default corpus: one document
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("needs --corpus"), std::string::npos) << out;
  auto s = store::RunStore::open(dir.file("r.db"));
  EXPECT_TRUE(s.listRuns().empty());
}

TEST(ReproduceCli, TheTinyRecipeKilledMidwayResumesToItsReport) {
  test::TempDir dir;
  test::writeFile(dir.file("c4.jsonl"), jsonl(700));
  const std::string cli = DEPTHLAB_CLI_PATH, db = dir.file("r.db");
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

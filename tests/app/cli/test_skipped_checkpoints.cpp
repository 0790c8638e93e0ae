// `analyze` and `eval` on a run whose newest checkpoint is broken: both fall back to the older
// one, as resume does, and both say which they passed over and why, in text and in --json.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "store/run_store.h"
#include "support/build_paths.h"
#include "support/temp_dir.h"

using namespace depthlab;
namespace fs = std::filesystem;

TEST(SkippedCheckpoints, AnalyzeAndEvalNameTheCheckpointsTheyPassedOver) {
  test::TempDir dir;
  std::string text;
  for (int i = 0; text.size() < 20000; ++i)
    text += "the deep layers idle " + std::to_string(i % 37) + "\n";
  test::writeFile(dir.file("corpus.txt"), text);
  test::writeFile(dir.file("every5.json"), R"({"run": {"checkpointEvery": 5}})");
  const std::string cli = depthlab::test::cliPath() + " --db " + dir.file("r.db");
  std::string out;
  ASSERT_EQ(test::runCommand(cli + " train --preset tiny --scheme pre_ln --steps 12 --corpus " +
                                 dir.file("corpus.txt") + " --config " + dir.file("every5.json") +
                                 " --checkpoint-dir " + dir.file("ck") + " --quiet 2>&1",
                             &out),
            0)
      << out;
  auto checkpoints = store::RunStore::open(dir.file("r.db")).checkpoints(1);
  ASSERT_GE(checkpoints.size(), 2u);
  const auto newest = checkpoints.back();
  fs::resize_file(newest.path, fs::file_size(newest.path) / 2);
  const std::string why = "skipped the checkpoint at step " + std::to_string(newest.step);

  ASSERT_EQ(test::runCommand(cli + " analyze --run 1 --probes variance 2>&1", &out), 0) << out;
  EXPECT_NE(out.find(why), std::string::npos) << out;
  EXPECT_NE(out.find("truncated"), std::string::npos) << out;
  ASSERT_EQ(test::runCommand(cli + " --json analyze --run 1 --probes variance 2>/dev/null", &out),
            0)
      << out;
  auto j = nlohmann::json::parse(out);
  ASSERT_EQ(j["skipped"].size(), 1u) << out;
  EXPECT_EQ(j["step"].get<int64_t>(), checkpoints[checkpoints.size() - 2].step);

  ASSERT_EQ(test::runCommand(cli + " eval --run 1 2>&1", &out), 0) << out;
  EXPECT_NE(out.find(why), std::string::npos) << out;
  ASSERT_EQ(test::runCommand(cli + " --json eval --run 1 2>/dev/null", &out), 0) << out;
  EXPECT_EQ(nlohmann::json::parse(out)["skipped"].size(), 1u) << out;
}

// `report` through the real depthlab-cli: what a run lacks is named with the command that
// computes it; a missing validation loss is not sent to `analyze`, which cannot compute it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "experiment/experiment_config.h"
#include "experiment/presets.h"
#include "store/run_store.h"
#include "support/temp_dir.h"

using namespace depthlab;

TEST(ReportCli, AMissingValidationLossPointsToEvalNotToAnalyze) {
  test::TempDir dir;
  int64_t id = 0;
  {  // a run with nothing measured yet (as one stopped before its first evaluation)
    auto s = store::RunStore::open(dir.file("runs.db"));
    store::NewRun nr;
    nr.name = "bare";
    nr.groupName = "g";
    nr.scheme = "pre_ln";
    nr.configJson = experiment::toJson(*experiment::presetConfig("tiny")).dump();
    id = s.createRun(nr);
  }
  const std::string n = std::to_string(id);
  std::string out;
  ASSERT_EQ(test::runCommand(std::string(DEPTHLAB_CLI_PATH) + " --db " + dir.file("runs.db") +
                                 " report --runs " + n + " 2>&1", &out), 0) << out;
  EXPECT_NE(out.find("run " + n + " has no validation loss"), std::string::npos) << out;
  EXPECT_NE(out.find("eval --run " + n + " --corpus TEXT"), std::string::npos) << out;
  const auto lacks = out.find("run " + n + " lacks:");
  ASSERT_NE(lacks, std::string::npos) << out;  // the probes, sent to analyze
  const std::string line = out.substr(lacks, out.find('\n', lacks) - lacks);
  EXPECT_NE(line.find("analyze --run " + n), std::string::npos) << line;
  EXPECT_EQ(line.find("loss_val"), std::string::npos) << line;
}

// What `train` / `resume` print (app/cli/train_output): a run stopped or crashed before its
// first update shows "-" for its train loss, in the summary table, the progress line and
// --json (it had shown a loss of 0.0000, a value never measured); cost lines are marked.
#include <gtest/gtest.h>

#include <string>

#include "train_output.h"

using namespace depthlab;

namespace {

experiment::GroupResult stoppedGroup() {
  experiment::GroupResult r;
  r.groupName = "llama-130m";
  experiment::MemberProgress none;  // stopped during its first update
  none.runId = 7;
  none.scheme = "pre_ln";
  none.status = store::RunStatus::Stopped;
  experiment::MemberProgress some;
  some.runId = 8;
  some.scheme = "lns";
  some.status = store::RunStatus::Stopped;
  some.step = 3;
  some.lossTrain = 5.12345;
  r.members = {none, some};
  return r;
}

}  // namespace

TEST(TrainOutput, ARunWithNoUpdateShowsADashNotALossOfZero) {
  const auto r = stoppedGroup();
  const std::string table = cli::summaryText(r);
  EXPECT_EQ(table.find("0.0000"), std::string::npos) << table;
  EXPECT_NE(table.find("pre_ln             stopped           0           -"), std::string::npos)
      << table;
  EXPECT_NE(table.find("5.1235"), std::string::npos) << table;
  const auto j = cli::summaryJson(r);
  EXPECT_TRUE(j["runs"][0]["loss_train"].is_null()) << j.dump();
  EXPECT_DOUBLE_EQ(j["runs"][1]["loss_train"].get<double>(), 5.12345);
  experiment::GroupProgress p;
  p.step = 0;
  p.totalSteps = 20000;
  p.members = r.members;
  const std::string line = cli::progressLine(p);
  EXPECT_NE(line.find("| pre_ln - 0 tok/s"), std::string::npos) << line;
  EXPECT_NE(line.find("| lns 5.1235"), std::string::npos) << line;
}

TEST(TrainOutput, CostLinesAreMarkedAndWarningsSaySo) {
  EXPECT_EQ(cli::costLine("20,000 updates", false), "cost   20,000 updates");
  EXPECT_EQ(cli::costLine("the run would read", true), "cost   WARNING: the run would read");
}

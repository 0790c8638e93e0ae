// `report` through the real depthlab-cli: what a run lacks is named with the command that
// computes it; a missing validation loss is not sent to `analyze`, which cannot compute it; it
// shows the metrics the catalogue marks kReport, by their catalogue labels, and no others.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "experiment/experiment_config.h"
#include "experiment/presets.h"
#include "store/metric_catalogue.h"
#include "store/run_store.h"
#include "support/build_paths.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

// A run of the tiny preset planned for `planned` steps that trained `trained`: train losses at
// every step, validation loss and variance every 10.
int64_t addTrainedRun(store::RunStore& s, const char* scheme, int planned, int trained) {
  store::NewRun nr;
  nr.name = scheme;
  nr.groupName = "g";
  nr.scheme = scheme;
  auto c = *experiment::presetConfig("tiny");
  c.optim.steps = planned;
  nr.configJson = experiment::toJson(c).dump();
  const int64_t id = s.createRun(nr);
  store::WriteBatch w;
  for (int t = 0; t < trained; ++t) w.scalar(t, "loss_train", 5.0 - 0.1 * t);
  for (int t = 10; t <= trained; t += 10) {
    w.scalar(t, "loss_val", 4.0 - 0.01 * t);
    w.layer(t, "variance", {1.0f * t, 2.0f * t});
  }
  s.write(id, w);
  return id;
}

// A tiny-preset run with nothing measured yet (as one stopped before its first evaluation).
int64_t addBareRun(store::RunStore& s, const char* name, const char* group, const char* scheme) {
  store::NewRun nr;
  nr.name = name;
  nr.groupName = group;
  nr.scheme = scheme;
  nr.configJson = experiment::toJson(*experiment::presetConfig("tiny")).dump();
  return s.createRun(nr);
}

}  // namespace

TEST(ReportCli, AMissingValidationLossPointsToEvalNotToAnalyze) {
  test::TempDir dir;
  int64_t id = 0;
  {
    auto s = store::RunStore::open(dir.file("runs.db"));
    id = addBareRun(s, "bare", "g", "pre_ln");
  }
  const std::string n = std::to_string(id);
  std::string out;
  ASSERT_EQ(test::runCommand(depthlab::test::cliPath() + " --db " + dir.file("runs.db") +
                                 " report --runs " + n + " 2>&1",
                             &out),
            0)
      << out;
  EXPECT_NE(out.find("run " + n + " has no validation loss"), std::string::npos) << out;
  EXPECT_NE(out.find("eval --run " + n + "` measures it on the run's validation split"),
            std::string::npos)
      << out;
  const auto lacks = out.find("run " + n + " lacks:");
  ASSERT_NE(lacks, std::string::npos) << out;  // the probes, sent to analyze
  const std::string line = out.substr(lacks, out.find('\n', lacks) - lacks);
  EXPECT_NE(line.find("analyze --run " + n), std::string::npos) << line;
  EXPECT_EQ(line.find("loss_val"), std::string::npos) << line;
}

TEST(ReportCli, RunsTrainedToDifferentLengthsAreReportedAtTheFewestStepsUnlessAsked) {
  // Run b was trained further (20 steps against a's 10): its last numbers beside a's had
  // credited LNS with ten more steps of training.
  test::TempDir dir;
  int64_t a = 0, b = 0;
  {
    auto s = store::RunStore::open(dir.file("runs.db"));
    a = addTrainedRun(s, "pre_ln", 10, 10);
    b = addTrainedRun(s, "lns", 20, 20);  // planned for 10, trained further (resume --steps 20)
  }
  const std::string cli = depthlab::test::cliPath() + " --db " + dir.file("runs.db") + " ";
  const std::string ids = std::to_string(a) + "," + std::to_string(b);
  std::string out;
  ASSERT_EQ(test::runCommand(cli + "--json report --runs " + ids + " 2>&1", &out), 0) << out;
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j[1]["steps"], 10);
  EXPECT_DOUBLE_EQ(j[1]["loss_val"].get<double>(), 3.9);
  EXPECT_EQ(j[1]["probe_step"], 10);
  EXPECT_DOUBLE_EQ(j[1]["variance_last"].get<double>(), 20.0);
  ASSERT_EQ(test::runCommand(cli + "report --runs " + ids + " 2>&1", &out), 0) << out;
  EXPECT_NE(out.find("each shown after 10 steps"), std::string::npos) << out;
  // Asked for: each run at step 20 (a has only its 10).
  ASSERT_EQ(test::runCommand(cli + "--json report --step 20 --runs " + ids + " 2>&1", &out), 0)
      << out;
  j = nlohmann::json::parse(out);
  EXPECT_EQ(j[0]["steps"], 10);
  EXPECT_EQ(j[1]["steps"], 20);
  EXPECT_DOUBLE_EQ(j[1]["loss_val"].get<double>(), 3.8);
}

TEST(ReportCli, ADivergedRunDoesNotPullTheOthersBackToItsStep) {
  // Planned alike, one run diverged at step 4: the others keep their final numbers.
  test::TempDir dir;
  int64_t ok = 0, diverged = 0;
  {
    auto s = store::RunStore::open(dir.file("runs.db"));
    ok = addTrainedRun(s, "pre_ln", 20, 20);
    diverged = addTrainedRun(s, "post_ln", 20, 4);
  }
  std::string out;
  ASSERT_EQ(test::runCommand(depthlab::test::cliPath() + " --db " + dir.file("runs.db") +
                                 " --json report --runs " + std::to_string(ok) + "," +
                                 std::to_string(diverged) + " 2>&1",
                             &out),
            0)
      << out;
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j[0]["steps"], 20);
  EXPECT_EQ(j[1]["steps"], 4);
}

// A paired group is named as train names it: report and runs list take --runs group:NAME
// (quoted, with its space), alone or beside ids; an unknown group names the groups there are.
TEST(ReportCli, ReportAndRunsListTakeAGroupByName) {
  test::TempDir dir;
  int64_t a = 0, b = 0, other = 0;
  {
    auto s = store::RunStore::open(dir.file("runs.db"));
    a = addTrainedRun(s, "pre_ln", 10, 10);
    b = addTrainedRun(s, "lns", 10, 10);
    other = addBareRun(s, "elsewhere", "cpu-demo 2", "post_ln");
  }
  const std::string cli = depthlab::test::cliPath() + " --db " + dir.file("runs.db") + " ";
  std::string out;
  ASSERT_EQ(test::runCommand(cli + "--json report --runs group:g 2>&1", &out), 0) << out;
  auto j = nlohmann::json::parse(out);
  ASSERT_EQ(j.size(), 2u) << out;
  EXPECT_EQ(j[0]["run_id"], a);
  EXPECT_EQ(j[1]["run_id"], b);
  ASSERT_EQ(test::runCommand(cli + "--json runs list --runs '" + std::to_string(other) +
                                 ",group:cpu-demo 2,group:g' 2>&1",
                             &out),
            0)
      << out;
  j = nlohmann::json::parse(out);
  ASSERT_EQ(j.size(), 3u) << out;  // each run once, in the order named
  EXPECT_EQ(j[0]["id"], other);
  EXPECT_EQ(j[1]["id"], a);
  EXPECT_EQ(j[2]["id"], b);
  EXPECT_NE(test::runCommand(cli + "report --runs group:nope 2>&1", &out), 0);
  EXPECT_NE(out.find("no runs in group 'nope' (groups: 'cpu-demo 2', 'g')"), std::string::npos)
      << out;
}

// Every metric of the catalogue stored for a run: the report shows each the catalogue marks
// kReport (a scalar under its key in --json with its value, every one under its catalogue label
// in the table) and none of the others.
TEST(ReportCli, ShowsTheMetricsTheCatalogueMarksForTheReportAndNoOthers) {
  test::TempDir dir;
  int64_t id = 0;
  std::map<std::string, double> stored;  // scalar key -> its value (whole: lazy_layers is a count)
  {
    auto s = store::RunStore::open(dir.file("runs.db"));
    id = addBareRun(s, "every metric", "g", "dyt");
    store::WriteBatch w;
    double v = 3;
    for (const auto& m : metrics::catalogue()) {
      const std::string key(m.key);
      if (m.kind == metrics::Kind::Scalar) w.scalar(10, key, stored[key] = v++);
      if (m.kind == metrics::Kind::PerLayer) w.layer(10, key, {0.5f, 0.25f});
    }
    s.write(id, w);
  }
  const std::string cli = depthlab::test::cliPath() + " --db " + dir.file("runs.db") + " ";
  std::string out;
  ASSERT_EQ(test::runCommand(cli + "--json report --runs " + std::to_string(id) + " 2>&1", &out), 0)
      << out;
  const auto j = nlohmann::json::parse(out).at(0);
  for (const auto& [key, value] : stored) {
    const bool shown = metrics::require(key, metrics::Kind::Scalar).panels & metrics::kReport;
    ASSERT_EQ(j.contains(key), shown) << key << " in " << j.dump();
    if (shown) {
      EXPECT_DOUBLE_EQ(j[key].get<double>(), value) << key;
    }
  }
  ASSERT_EQ(test::runCommand(cli + "report --runs " + std::to_string(id) + " 2>&1", &out), 0)
      << out;
  for (const auto& m : metrics::catalogue()) {
    if (m.kind == metrics::Kind::Matrix) continue;
    const bool shown = (m.panels & metrics::kReport) != 0;
    EXPECT_EQ(out.find(std::string(m.label)) != std::string::npos, shown) << m.label << "\n" << out;
  }
}

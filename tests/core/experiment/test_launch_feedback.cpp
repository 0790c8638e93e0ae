// What a launch needs before and while it starts: unique group names (every launch its own
// group, runs named by group, scheme and seed), pre-flight checks of the disk (corpus,
// tokenizer model, checkpoint folder and space), start-up phases reported with their times,
// and time estimates calibrated on the groups that finished on this machine.
#include <gtest/gtest.h>

#include <filesystem>

#include "data/corpus_prepare.h"
#include "experiment/group_names.h"
#include "experiment/preflight.h"
#include "experiment/presets.h"
#include "experiment/resource_estimate.h"
#include "experiment/run_group.h"
#include "support/model_fixtures.h"
#include "support/run_fixtures.h"
#include "support/temp_dir.h"

using namespace depthlab;

TEST(GroupNames, AUsedNameGetsTheNextFreeSuffix) {
  EXPECT_EQ(experiment::uniqueGroupName("cpu-demo", {}), "cpu-demo");
  EXPECT_EQ(experiment::uniqueGroupName("cpu-demo", {"cpu-demo"}), "cpu-demo 2");
  EXPECT_EQ(experiment::uniqueGroupName("cpu-demo", {"cpu-demo", "cpu-demo 2", "cpu-demo 3"}), "cpu-demo 4");
  EXPECT_EQ(experiment::uniqueGroupName("", {}), "group");
  EXPECT_EQ(experiment::defaultRunName("demo 2", "lns", 3), "demo 2 lns s3");
  EXPECT_FALSE(experiment::isRenamed("demo 2 lns s3", "demo 2", "lns", 3));
  EXPECT_TRUE(experiment::isRenamed("baseline PreLN 24L", "demo 2", "pre_ln", 3));
}

TEST(GroupNames, TwoLaunchesWithOneNameBecomeTwoGroups) {
  test::TempDir dir;
  auto store = store::RunStore::open(dir.file("runs.db"));
  auto c = test::smallConfig(2);
  c.data.corpus = test::writeWordCorpus(dir);
  c.optim.steps = 3;
  c.name = "cpu-demo";
  c.schemes = {"pre_ln", "lns"};
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  std::vector<std::pair<double, std::string>> phases;
  o.onPhase = [&](double s, const std::string& what) { phases.emplace_back(s, what); };
  const auto first = experiment::runGroup(c, store, o);
  const auto second = experiment::runGroup(c, store, o);
  EXPECT_EQ(first.groupName, "cpu-demo");
  EXPECT_EQ(second.groupName, "cpu-demo 2");
  std::map<std::string, int> perGroup;
  for (const auto& r : store.listRuns()) {
    ++perGroup[r.groupName];
    EXPECT_EQ(r.name, experiment::defaultRunName(r.groupName, r.scheme, r.seed));
  }
  EXPECT_EQ(perGroup["cpu-demo"], 2);
  EXPECT_EQ(perGroup["cpu-demo 2"], 2);
  // Every start-up phase is reported, in order, with non-decreasing times: the first launch
  // tokenizes the corpus into its store, the second finds the store up to date.
  std::vector<std::string> kinds;
  for (const auto& [s, what] : phases) kinds.push_back(what.substr(0, what.find(' ')));
  const std::vector<std::string> expected = {
      "reading", "tokenizing", "tokenizing", "mapping", "building", "first", "first",
      "reading", "checking", "mapping", "building", "first", "first"};
  ASSERT_EQ(kinds, expected);
  for (size_t i = 1; i < 7; ++i) EXPECT_GE(phases[i].first, phases[i - 1].first);
  EXPECT_NE(phases[2].second.find("100%"), std::string::npos) << phases[2].second;
  EXPECT_NE(phases[5].second.find("group cpu-demo "), std::string::npos) << phases[5].second;
  EXPECT_NE(phases[9].second.find("up to date"), std::string::npos) << phases[9].second;
  EXPECT_NE(phases[11].second.find("group cpu-demo 2 "), std::string::npos) << phases[11].second;
}

TEST(Preflight, EstimatesTheTokenStoreOfACorpusNotYetPrepared) {
  test::TempDir dir;
  test::writeFile(dir.file("c.txt"), std::string(100000, 'a') + "\n");
  data::DataConfig d;
  d.corpus = dir.file("c.txt");
  EXPECT_DOUBLE_EQ(experiment::tokenStoreBytesNeeded(d), 100001.0);
  d.tokenizer = "spm:1000";
  EXPECT_NEAR(experiment::tokenStoreBytesNeeded(d), 60000.6, 1e-6);
  d.tokenizer = "byte";
  data::PrepareOptions o;
  data::prepareCorpus(d.corpus, o);
  EXPECT_EQ(experiment::tokenStoreBytesNeeded(d), 0.0);  // prepared: nothing more to write
  d.corpus = data::storeDirFor(d.corpus, "byte");
  EXPECT_EQ(experiment::tokenStoreBytesNeeded(d), 0.0);  // a store named directly
}

TEST(Preflight, NamesWhatTheLaunchWouldMissOnDisk) {
  test::TempDir dir;
  auto c = *experiment::presetConfig("tiny");
  auto fields = [&](const std::string& root) {
    std::vector<std::string> out;
    for (const auto& i : experiment::preflightIssues(c, root)) out.push_back(i.field + ": " + i.message);
    return out;
  };
  const std::string root = dir.file("ckpt");
  c.data.corpus = "";  // the default corpus: prepared when needed
  EXPECT_TRUE(fields(root).empty());
  c.data.corpus = dir.file("missing.txt");
  ASSERT_EQ(fields(root).size(), 1u);
  EXPECT_NE(fields(root)[0].find("data.corpus: Corpus: " + dir.file("missing.txt") + " does not exist"), std::string::npos);
  test::writeFile(dir.file("empty.txt"), "");
  c.data.corpus = dir.file("empty.txt");
  EXPECT_NE(fields(root).at(0).find("is empty"), std::string::npos);
  std::filesystem::create_directories(dir.file("nothing"));
  c.data.corpus = dir.file("nothing");
  EXPECT_NE(fields(root).at(0).find("holds no non-empty files"), std::string::npos);
  c.data.corpus = test::writeWordCorpus(dir);
  EXPECT_TRUE(fields(root).empty());
  c.data.tokenizer = "spm:" + dir.file("none.model");
  EXPECT_NE(fields(root).at(0).find("data.tokenizer: Tokenizer: the SentencePiece model"), std::string::npos);
  c.data.tokenizer = "spm:8000";  // trained on the corpus: nothing to check on disk
  EXPECT_TRUE(fields(root).empty());
  // A checkpoint folder under a file cannot be created.
  test::writeFile(dir.file("afile"), "x");
  EXPECT_NE(fields(dir.file("afile") + "/ckpt").at(0).find("run.checkpointDir: Checkpoints: cannot create or write"),
            std::string::npos);
  // More checkpoints than the disk holds: grow the model until they do not fit.
  const double available = static_cast<double>(std::filesystem::space(dir.path()).available);
  c.run.checkpointKeep = 1000;
  c.model.nLayers = 2;
  c.model.dModel = 64;
  while (experiment::checkpointBytes(c, "pre_ln") * 1002 * static_cast<double>(c.schemes.size()) <= available) {
    c.model.dModel *= 2;
  }
  c.model.nHeads = 2;
  const auto issues = fields(root);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_NE(issues[0].find("of checkpoints but"), std::string::npos) << issues[0];
}

TEST(TimeCalibration, EstimatesScaleByWhatFinishedGroupsReallyTook) {
  auto c = *experiment::presetConfig("cpu-demo");
  auto runOf = [&](int64_t id, const std::string& group, const std::string& scheme, double start, double end,
                   store::RunStatus status, const std::string& device) {
    store::RunInfo r;
    r.id = id;
    r.groupName = group;
    r.scheme = scheme;
    auto rc = c;
    rc.schemes = {scheme};
    rc.run.device = device;
    r.configJson = experiment::toJson(rc).dump();
    r.status = status;
    r.startedAt = start;
    r.finishedAt = end;
    return r;
  };
  const double guess = experiment::estimateRun(c, "pre_ln").seconds + experiment::estimateRun(c, "lns").seconds;
  std::vector<store::RunInfo> runs = {
      runOf(1, "a", "pre_ln", 0, 2.0 * guess, store::RunStatus::Finished, "cpu"),
      runOf(2, "a", "lns", 0, 2.0 * guess, store::RunStatus::Finished, "cpu"),
      runOf(3, "b", "pre_ln", 0, 3.0 * guess, store::RunStatus::Finished, "cpu"),
      runOf(4, "b", "lns", 1, 3.0 * guess, store::RunStatus::Finished, "cpu"),
      // A stopped group and a GPU group do not count for the CPU.
      runOf(5, "c", "pre_ln", 0, 100.0 * guess, store::RunStatus::Stopped, "cpu"),
      runOf(6, "d", "pre_ln", 0, 50.0 * guess, store::RunStatus::Finished, "cuda"),
      // Stopped after 1 x guess, resumed days later (its pause), trained 1.5 x guess more.
      runOf(7, "e", "pre_ln", 0, 500.0 * guess, store::RunStatus::Finished, "cpu"),
      runOf(8, "e", "lns", 0, 500.0 * guess, store::RunStatus::Finished, "cpu")};
  runs[6].pausedSeconds = runs[7].pausedSeconds = 497.5 * guess;
  const auto cal = experiment::calibrateTime(runs, "cpu");
  EXPECT_EQ(cal.groups, 3);
  EXPECT_NEAR(cal.factor, 2.5, 1e-6);  // the median of 2, 3 and 2.5 (its span, 500, had counted)
  EXPECT_NEAR(experiment::estimateRun(c, "pre_ln", cal).seconds, 2.5 * experiment::estimateRun(c, "pre_ln").seconds, 1e-6);
  EXPECT_EQ(experiment::calibrateTime({}, "cpu").groups, 0);
  EXPECT_EQ(experiment::calibrateTime({}, "cpu").factor, 1.0);
  EXPECT_EQ(experiment::formatDuration(4.2), "4 s");
  EXPECT_EQ(experiment::formatDuration(0.01), "1 s");  // never "~0.0 min"
  EXPECT_EQ(experiment::formatDuration(150), "2.5 min");
  EXPECT_EQ(experiment::formatDuration(4680), "1.3 h");
}

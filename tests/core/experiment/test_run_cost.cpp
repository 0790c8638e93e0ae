// What a run will cost, said before its first update (experiment/run_cost): tokens, passes over
// the corpus with a warning past kCorpusPassesWarning, time, checkpoint disk, the first
// update's measured time; and the training loop writing them as events before that update
// (`train --preset llama-130m --micro-batch 8` on Tiny Shakespeare had said nothing of the
// 2.6B tokens it would read, ~2,400 passes over its corpus, before a first update of 94 s).
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "experiment/presets.h"
#include "experiment/run_cost.h"
#include "experiment/run_group.h"
#include "store/metric_catalogue.h"
#include "support/model_fixtures.h"
#include "support/run_fixtures.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string joined(const std::vector<experiment::CostLine>& lines) {
  std::string s;
  for (const auto& l : lines) s += (l.warning ? "WARNING: " : "") + l.text + "\n";
  return s;
}

}  // namespace

TEST(RunCost, TheIssuesRunSaysItsTokensAndPassesAndWarnsWithTheNumbers) {
  auto c = *experiment::presetConfig("llama-130m");
  experiment::applyMicroBatch(c, 8);  // the global batch of 512 sequences stays
  c.schemes = {"pre_ln"};
  const auto cost = experiment::estimateRunCost(c, 0, 1.0e6, 0.1e6);
  EXPECT_EQ(cost.updates, 20000);
  EXPECT_DOUBLE_EQ(cost.tokens, 20000.0 * 512 * 256);
  EXPECT_NEAR(cost.passes, 2621.44, 1e-6);
  EXPECT_EQ(cost.stepsForWarning, 30);  // 4 x 1.0M tokens / 131,072 a update
  EXPECT_TRUE(experiment::readsCorpusTooOften(cost));
  const auto lines = experiment::describeRunCost(cost);
  const std::string text = joined(lines);
  EXPECT_TRUE(contains(text, "20,000 updates x 512 sequences x 256 tokens = 2.6B tokens")) << text;
  EXPECT_TRUE(contains(text, "corpus: 1.1M tokens, 1.0M in its training split: 2,621 passes"))
      << text;
  EXPECT_TRUE(contains(
      text, "WARNING: the run would read its training split 2,621 times, more than 4 passes"))
      << text;
  EXPECT_TRUE(contains(text, "at most 30 updates (4 passes)")) << text;
  EXPECT_TRUE(contains(text, "time: about ")) << text;
  EXPECT_TRUE(contains(text, "uncalibrated")) << text;
  // fp32 weights and Adam's two moments, kept: the last 3, the best and the final.
  EXPECT_DOUBLE_EQ(cost.checkpointBytes, 12.0 * static_cast<double>(experiment::parameterCount(
                                                    c.model, "pre_ln", c.options)));
  EXPECT_TRUE(contains(text, "up to 5 kept (the last 3, the best, the final)")) << text;
  EXPECT_TRUE(contains(text, "checkpoints every 10.0 min and every 5,000 updates and at the end"))
      << text;
}

TEST(RunCost, AFewPassesAreNotWarnedAboutAndPairedRunsCountEach) {
  auto c = test::smallConfig(2);  // 4 x 16 = 64 tokens a update
  c.optim.steps = 100;            // 6,400 tokens a run
  const auto cost = experiment::estimateRunCost(c, 0, 3200, 100);
  EXPECT_DOUBLE_EQ(cost.passes, 2.0);
  EXPECT_FALSE(experiment::readsCorpusTooOften(cost));
  const std::string text = joined(experiment::describeRunCost(cost));
  EXPECT_FALSE(contains(text, "WARNING")) << text;
  EXPECT_TRUE(contains(text, "= 6.4k tokens a run (2 runs: 12.8k in all)")) << text;
  EXPECT_TRUE(contains(text, "2.0 passes (epochs) over it a run")) << text;
  // Resumed at step 40: the 60 updates left.
  const auto left = experiment::estimateRunCost(c, 40, 3200, 100);
  EXPECT_EQ(left.updates, 60);
  EXPECT_TRUE(
      contains(joined(experiment::describeRunCost(left)), "the 60 updates left x 4 sequences"));
  // A disk too small for the checkpoints kept is a warning naming both sizes.
  auto full = cost;
  full.checkpointDir = "/ckpt";
  full.diskFreeBytes = 1000;
  const std::string fullText = joined(experiment::describeRunCost(full));
  EXPECT_TRUE(contains(fullText, "WARNING: the checkpoints kept would take")) << fullText;
  EXPECT_TRUE(contains(fullText, "/ckpt has 1 kB free")) << fullText;
}

TEST(RunCost, TheFirstUpdatesTimeMakesTheWholeRunsTime) {
  EXPECT_EQ(
      experiment::describeFirstStep(94, 20000, 1),
      "first update took 94 s: 20,000 updates ~ 21.8 days here (evaluations and probes besides)");
  EXPECT_EQ(experiment::describeFirstStep(3, 600, 2),
            "first step took 3.0 s (one update of each of the 2 runs): 600 steps ~ 30.0 min here "
            "(evaluations and probes besides)");
  EXPECT_TRUE(
      contains(experiment::describeFirstStep(94, 15000, 1, true),
               "first update after resuming took 94 s: the 15,000 updates left ~ 16.3 days"));
}

TEST(RunCost, CountsAndLongDurationsReadAtAGlance) {
  EXPECT_EQ(experiment::formatCount(950), "950");
  EXPECT_EQ(experiment::formatCount(1.2e6), "1.2M");
  EXPECT_EQ(experiment::formatCount(2.62e9), "2.6B");
  EXPECT_EQ(experiment::formatThousands(20000), "20,000");
  EXPECT_EQ(experiment::formatThousands(1234567), "1,234,567");
  EXPECT_EQ(experiment::formatThousands(999), "999");
  EXPECT_EQ(experiment::formatLongDuration(90), experiment::formatDuration(90));
  EXPECT_EQ(experiment::formatLongDuration(30 * 3600), "30.0 h");
  EXPECT_EQ(experiment::formatLongDuration(1.88e6), "21.8 days");
  EXPECT_EQ(experiment::formatLongDuration(4 * 365.25 * 86400), "4.0 years");
  EXPECT_EQ(experiment::formatBytes(1.6e9), "1.6 GB");
}

// The training loop says the cost before the first update (events of every run at step 0, and
// onCost before the first step's phase ends), warns about a corpus read many times, then says
// what the first update's time makes of the run (an event at step 1).
TEST(RunCost, TheLoopSaysTheCostBeforeTheFirstUpdateAndRecordsIt) {
  test::TempDir dir;
  auto c = test::smallConfig(2);
  c.data.corpus = test::writeWordCorpus(dir, 3000);  // ~2,850 training tokens
  c.optim.batchSize = 8;
  c.optim.gradAccum = 32;  // 4,096 tokens a update: 4 updates read the split ~5.7 times
  c.optim.steps = 4;
  c.optim.warmupSteps = 1;
  c.schemes = {"pre_ln"};
  auto store = store::RunStore::open(dir.file("runs.db"));
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  std::vector<std::string> said;  // cost lines and phases, in order
  o.onCost = [&](const std::string& line, bool warning) {
    said.push_back((warning ? "W " : "C ") + line);
  };
  o.onPhase = [&](double, const std::string& phase) { said.push_back("P " + phase); };
  const auto r = experiment::runGroup(c, store, o);
  size_t firstCost = said.size(), firstDone = said.size(), warning = said.size(),
         measured = said.size();
  for (size_t i = 0; i < said.size(); ++i) {
    if (said[i].rfind("C 4 updates x 256 sequences", 0) == 0) firstCost = std::min(firstCost, i);
    if (said[i].rfind("W the run would read its training split", 0) == 0) warning = i;
    if (said[i].rfind("C first update took", 0) == 0) measured = i;
    if (said[i] == "P first step done; training") firstDone = i;
  }
  ASSERT_LT(firstCost, said.size());
  EXPECT_LT(firstCost, warning);
  EXPECT_LT(warning, measured);
  EXPECT_LT(measured, firstDone);
  ASSERT_LT(firstDone, said.size());
  const auto events = store.events(r.members[0].runId);
  bool costEvent = false, warningEvent = false, measuredEvent = false;
  for (const auto& e : events) {
    costEvent = costEvent || (e.step == 0 && contains(e.message, "4 updates x 256 sequences"));
    warningEvent = warningEvent || (e.step == 0 && e.level == store::EventLevel::Warning &&
                                    contains(e.message, "more than 4 passes"));
    measuredEvent = measuredEvent || (e.step == 1 && contains(e.message, "first update took"));
  }
  EXPECT_TRUE(costEvent);
  EXPECT_TRUE(warningEvent);
  EXPECT_TRUE(measuredEvent);
}

// A resumed run stopped before its first update here reports its last train loss (it had
// reported 0, which `train`/`resume` printed as a loss of 0.0000).
TEST(RunCost, AResumedRunStoppedBeforeItsFirstUpdateKeepsItsLastLoss) {
  test::TempDir dir;
  auto c = test::smallConfig(2);
  c.data.corpus = test::writeWordCorpus(dir, 20000);
  c.optim.steps = 3;
  c.optim.warmupSteps = 1;
  c.schemes = {"pre_ln"};
  auto store = store::RunStore::open(dir.file("runs.db"));
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  const auto first = experiment::runGroup(c, store, o);
  const int64_t id = first.members[0].runId;
  std::atomic<bool> stop{true};
  o.stopFlag = &stop;
  o.resumeToStep = 5;
  const auto again = experiment::resumeRun(id, store, o);
  ASSERT_EQ(again.members.size(), 1u);
  EXPECT_EQ(again.members[0].step, 3);
  EXPECT_DOUBLE_EQ(again.members[0].lossTrain,
                   store.scalarSeries(id, metrics::kLossTrain).back().value);
  EXPECT_NE(again.members[0].lossTrain, 0.0);
}

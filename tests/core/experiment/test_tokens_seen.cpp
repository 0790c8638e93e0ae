// tokens_seen: the training tokens a run has read, counted as the paper counts them (pads do
// not count), stored with the logged scalars and carried across a stop and a resume: a group on
// document rows reads fewer tokens than its slots, exactly the targets its batches hold, and a
// run stopped and resumed ends at the count of one never stopped.
#include <gtest/gtest.h>

#include <atomic>

#include "data/token_dataset.h"
#include "experiment/run_group.h"
#include "store/metric_catalogue.h"
#include "store/run_store.h"
#include "support/model_fixtures.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

experiment::ExperimentConfig documentRun(const test::TempDir& dir) {
  std::string s;
  for (int i = 0; i < 300; ++i) {
    std::string text = "doc " + std::to_string(i) + ":";
    for (int w = 0; w < 1 + i % 5; ++w) text += " idle";
    s += "{\"text\": \"" + text + "\"}\n";
  }
  test::writeFile(dir.file("c.jsonl"), s);
  auto c = test::smallConfig(2);
  c.data.corpus = dir.file("c.jsonl");
  c.data.packing = "document";
  c.model.seqLen = 32;
  c.optim.steps = 150;
  c.optim.gradAccum = 2;
  c.run.evalEvery = 0;
  c.schemes = {"pre_ln"};
  return c;
}

double lastTokensSeen(store::RunStore& s, int64_t id) {
  const auto v = s.scalarSeries(id, metrics::kTokensSeen);
  return v.empty() ? -1 : v.back().value;
}

}  // namespace

TEST(TokensSeen, DocumentRowsCountTheirTargetsNotTheirSlotsAcrossAResume) {
  test::TempDir dir;
  const auto c = documentRun(dir);
  auto s = store::RunStore::open(dir.file("runs.db"));
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ck");
  const int64_t straight = experiment::runGroup(c, s, o).members[0].runId;
  // Expected: the targets of every micro-batch the run trained on.
  auto corpus = data::loadCorpusTokens(c.data);
  const auto dataset = data::makeDataset(corpus, c.data, c.model.seqLen, c.optim.batchSize);
  double expected = 0;
  for (int64_t step = 0; step < c.optim.steps; ++step) {
    for (int micro = 0; micro < c.optim.gradAccum; ++micro) {
      expected += static_cast<double>(dataset.trainTargets(c.run.seed, step, micro));
    }
  }
  const double slots =
      static_cast<double>(c.optim.steps) * c.optim.gradAccum * c.optim.batchSize * c.model.seqLen;
  EXPECT_DOUBLE_EQ(lastTokensSeen(s, straight), expected);
  EXPECT_LT(expected, 0.8 * slots);  // short documents: most slots are pads

  auto stopped = c;
  stopped.name = "stopped";
  std::atomic<bool> stop{false};
  o.stopFlag = &stop;
  o.onProgress = [&](const experiment::GroupProgress& p) {
    if (p.step >= 5) stop = true;
  };
  const int64_t id = experiment::runGroup(stopped, s, o).members[0].runId;
  ASSERT_LT(s.scalarSeries(id, metrics::kLossTrain).back().step + 1, c.optim.steps);
  o.stopFlag = nullptr;
  o.onProgress = nullptr;
  experiment::resumeRun(id, s, o);
  EXPECT_DOUBLE_EQ(lastTokensSeen(s, id), expected);
}

// A checkpoint series as one run over training: each checkpoint (here the lab's own export-hf
// folders of one model trained 2 and 4 updates) probed at its step, equal to analysing it alone;
// run again, it continues where it stopped (a broken checkpoint stops it, keeping the earlier
// ones); checkpoints of another shape, or a changed probe setup, are refused before any write.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "analysis/run_comparison.h"
#include "experiment/run_config.h"
#include "experiment/run_group.h"
#include "hf/hf_export.h"
#include "hf/hf_import.h"
#include "hf/model_analysis.h"
#include "hf/series_import.h"
#include "store/metric_catalogue.h"
#include "support/error_of.h"
#include "support/model_fixtures.h"
#include "support/run_fixtures.h"
#include "support/temp_dir.h"

using namespace depthlab;
using test::errorOf;
namespace fs = std::filesystem;

namespace {

/// A 2-block Pre-LN model trained `steps` updates, exported to `out` (config.json says the step).
void exportTrained(const test::TempDir& dir, store::RunStore& s, int steps, const std::string& out,
                   int layers = 2) {
  auto c = test::smallConfig(layers);
  c.data.corpus = test::writeWordCorpus(dir);
  c.optim.steps = steps;
  c.optim.warmupSteps = 1;
  c.run.evalEvery = 0;
  c.schemes = {"pre_ln"};
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt-" + std::to_string(steps) + "-" + std::to_string(layers));
  const auto trained = experiment::runGroup(c, s, o);
  hf::exportRunToHf(s, trained.members[0].runId, out);
}

std::string tokensFile(const test::TempDir& dir) {
  std::ofstream f(dir.file("ids.txt"));
  for (int line = 0; line < 3; ++line) {
    for (int i = 0; i < 13; ++i) f << (line * 11 + i * 5) % 60 << " ";
    f << "\n";
  }
  return dir.file("ids.txt");
}

hf::SeriesOptions optionsFor(const std::vector<std::string>& folders, const std::string& ids) {
  hf::SeriesOptions o;
  o.checkpoints = hf::findSeries(folders);
  o.name = "tiny";
  o.analysis.text.tokensFile = ids;
  o.analysis.sequences = 3;
  o.analysis.seqLen = 12;
  o.analysis.probes = {"variance", "pruning"};
  return o;
}

struct Series : ::testing::Test {
  test::TempDir dir;
  store::RunStore train = store::RunStore::open(dir.file("train.db"));
  store::RunStore lab = store::RunStore::open(dir.file("lab.db"));
  std::string ids;
  void SetUp() override {
    exportTrained(dir, train, 2, dir.file("series/a"));
    exportTrained(dir, train, 4, dir.file("series/b"));
    ids = tokensFile(dir);
  }
};

}  // namespace

TEST_F(Series, EachCheckpointIsProbedAtItsStepAsAnalysingItAloneWould) {
  const auto r = hf::importHfSeries(lab, optionsFor({dir.file("series")}, ids));
  EXPECT_EQ(r.analyzedSteps, (std::vector<int64_t>{2, 4}));
  EXPECT_FALSE(r.continued);
  const auto run = *lab.run(r.runId);
  EXPECT_TRUE(experiment::isSeriesRun(run));
  EXPECT_FALSE(experiment::isSnapshotRun(run));
  EXPECT_EQ(run.status, store::RunStatus::Finished);
  EXPECT_NE(std::find(run.tags.begin(), run.tags.end(), "series"), run.tags.end());
  const auto variance = lab.layerSeries(r.runId, metrics::kVariance);
  ASSERT_EQ(variance.steps, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(lab.layerSeries(r.runId, metrics::kPruneDelta).steps.size(), 2u);
  // The run's import record is its newest checkpoint's: eval reads the series' last model.
  EXPECT_EQ(hf::importRecordOf(run)->source, fs::canonical(dir.file("series/b")).string());

  // Checkpoint b imported alone and analysed on the same ids: the same values.
  const auto alone = hf::importHfModel(lab, dir.file("series/b"), "b alone").runId;
  hf::ModelAnalysisOptions a = optionsFor({dir.file("series")}, ids).analysis;
  hf::analyzeImportedRun(lab, alone, a);
  const auto single = lab.layerSeries(alone, metrics::kVariance);
  ASSERT_EQ(single.steps.size(), 1u);
  const size_t L = static_cast<size_t>(variance.nLayers);  // values: (steps x L) row-major
  for (size_t l = 0; l < L; ++l) EXPECT_FLOAT_EQ(variance.values[L + l], single.values[l]);
  EXPECT_NE(variance.values[0], variance.values[L]);  // training moved the model
  // Analysing a series run as one snapshot would write over step 0: refused.
  EXPECT_NE(errorOf([&] { hf::analyzeImportedRun(lab, r.runId, a); }).find("checkpoint series"),
            std::string::npos);
}

TEST_F(Series, RunAgainItContinuesWhereABrokenCheckpointStoppedIt) {
  // b's weights cut short: the series stops at it, a's rows kept, the run stopped.
  const auto weights = dir.file("series/b/model.safetensors");
  const auto size = fs::file_size(weights);
  fs::copy_file(weights, dir.file("saved.safetensors"));
  fs::resize_file(weights, size / 2);
  const auto why = errorOf([&] { hf::importHfSeries(lab, optionsFor({dir.file("series")}, ids)); });
  EXPECT_NE(why.find("the checkpoint of step 4"), std::string::npos) << why;
  const auto runs = lab.listRuns();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, store::RunStatus::Stopped);
  EXPECT_EQ(lab.layerSeries(runs[0].id, metrics::kVariance).steps, (std::vector<int64_t>{2}));

  fs::remove(weights);
  fs::copy_file(dir.file("saved.safetensors"), weights);
  const auto r = hf::importHfSeries(lab, optionsFor({dir.file("series")}, ids));
  EXPECT_TRUE(r.continued);
  EXPECT_EQ(r.runId, runs[0].id);
  EXPECT_EQ(r.alreadyDone, (std::vector<int64_t>{2}));
  EXPECT_EQ(r.analyzedSteps, (std::vector<int64_t>{4}));
  EXPECT_EQ(lab.layerSeries(r.runId, metrics::kVariance).steps, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(lab.run(r.runId)->status, store::RunStatus::Finished);
  // Once more: nothing left to do, nothing written.
  const auto again = hf::importHfSeries(lab, optionsFor({dir.file("series")}, ids));
  EXPECT_TRUE(again.analyzedSteps.empty());
  EXPECT_EQ(again.alreadyDone.size(), 2u);
}

TEST_F(Series, AnotherShapeOrAnotherProbeSetupIsRefusedBeforeAnyWrite) {
  exportTrained(dir, train, 6, dir.file("other/c"), 3);
  auto why = errorOf([&] {
    hf::importHfSeries(lab, optionsFor({dir.file("series"), dir.file("other/c")}, ids));
  });
  EXPECT_NE(why.find("differ in shape"), std::string::npos) << why;
  EXPECT_TRUE(lab.listRuns().empty());

  hf::importHfSeries(lab, optionsFor({dir.file("series/a")}, ids));
  auto fewer = optionsFor({dir.file("series")}, ids);
  fewer.analysis.sequences = 2;
  why = errorOf([&] { hf::importHfSeries(lab, fewer); });
  EXPECT_NE(why.find("give the same probe text and options"), std::string::npos) << why;
  // The probe text edited in place: its ids differ from those the earlier checkpoints saw.
  std::ofstream(ids, std::ios::app) << "1 2 3\n";
  {
    std::ofstream f(ids);
    for (int i = 0; i < 3; ++i) f << "5 6 7 8 9 10 11 12 13 14 15 16 17\n";
  }
  why = errorOf([&] { hf::importHfSeries(lab, optionsFor({dir.file("series")}, ids)); });
  EXPECT_NE(why.find("has changed since"), std::string::npos) << why;
  EXPECT_EQ(lab.layerSeries(lab.listRuns()[0].id, metrics::kVariance).steps.size(), 1u);
}

TEST_F(Series, TwoSeriesOfOneShapeAreSeedsOfOneGroupWithTheirProbeLosses) {
  auto first = optionsFor({dir.file("series/a")}, ids);
  first.name = "seed1";
  auto second = optionsFor({dir.file("series/b")}, ids);
  second.name = "seed2";
  const auto one = hf::importHfSeries(lab, first).runId;
  const auto two = hf::importHfSeries(lab, second).runId;
  const auto groups = analysis::seedGroups(lab, {*lab.run(one), *lab.run(two)});
  ASSERT_EQ(groups.size(), 1u);  // their folders differ; their architecture and shape do not
  EXPECT_TRUE(groups[0].probeLoss);
  ASSERT_EQ(groups[0].finalValLoss.size(), 2u);
  EXPECT_DOUBLE_EQ(groups[0].finalValLoss[0],
                   lab.scalarSeries(one, metrics::kLossProbe).back().value);
  // A model of another depth is a group of its own.
  exportTrained(dir, train, 6, dir.file("deeper/step6"), 3);
  auto deeper = optionsFor({dir.file("deeper")}, ids);
  deeper.name = "deeper";
  const auto three = hf::importHfSeries(lab, deeper).runId;
  EXPECT_EQ(analysis::seedGroups(lab, {*lab.run(one), *lab.run(two), *lab.run(three)}).size(), 2u);
}

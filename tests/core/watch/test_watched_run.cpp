// WatchedRun: a watched loop's run as the lab's store keeps it (group, tag, liveness, the probe
// rows of a traced pass equal to the lab's own probes), its end, a locked store that keeps the
// rows for the next write, the lab refusing to train it, and the LNS scale check of the report.
#include <gtest/gtest.h>

#include <sqlite3.h>
#include <unistd.h>

#include "experiment/depth_scale_check.h"
#include "experiment/run_config.h"
#include "experiment/run_report.h"
#include "experiment/run_resume_steps.h"
#include "probes/depth_probes.h"
#include "probes/traced_forward.h"
#include "store/metric_catalogue.h"
#include "support/model_fixtures.h"
#include "support/temp_dir.h"
#include "watch/watched_run.h"

using namespace depthlab;

namespace {

watch::WatchSpec specOf(int layers, const std::string& scheme = "pre_ln") {
  watch::WatchSpec s;
  s.name = "loop";
  s.scheme = scheme;
  s.nLayers = layers;
  s.dModel = 32;
  s.nHeads = 4;
  s.vocabSize = 64;
  s.plannedSteps = 100;
  s.record.framework = "torch test";
  s.record.modelClass = "GPT";
  s.record.layersPath = "blocks";
  s.record.probeRows = 3;
  s.record.probeLength = 16;
  return s;
}

}  // namespace

TEST(WatchedRun, IsARunningRunOfItsOwnGroupTaggedWatched) {
  test::TempDir dir;
  watch::WatchedRun w(dir.file("lab.db"), specOf(4));
  auto s = store::RunStore::open(dir.file("lab.db"));
  auto run = s.run(w.runId());
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, store::RunStatus::Running);
  EXPECT_EQ(run->groupName, "watch-loop");
  EXPECT_EQ(run->pid, static_cast<int64_t>(getpid()));
  EXPECT_EQ(run->tags, std::vector<std::string>{"watched"});
  EXPECT_TRUE(experiment::isWatchedRun(*run));
  EXPECT_FALSE(experiment::isImportedRun(*run));
  auto config = experiment::configOf(*run);  // an ordinary config the lab reads
  EXPECT_EQ(config.model.nLayers, 4);
  EXPECT_EQ(config.optim.steps, 100);
  EXPECT_EQ(config.schemes, std::vector<std::string>{"pre_ln"});
  watch::WatchedRun second(dir.file("lab.db"), specOf(4));
  EXPECT_EQ(second.groupName(), "watch-loop 2");  // experiment::uniqueGroupName's rule
}

TEST(WatchedRun, StoresTheLabsOwnProbesOfATracedPass) {
  test::TempDir dir;
  auto c = test::smallConfig(4);
  torch::manual_seed(3);
  model::Decoder m(c.model, c.options, "pre_ln");
  m->eval();
  auto x = torch::randint(0, c.model.vocabSize, {3, c.model.seqLen}, torch::kInt64);
  const auto lab = probes::runForwardProbes(m, x, x, {false, true});
  model::ForwardTrace trace;
  {
    torch::NoGradGuard ng;
    probes::tracedForward(m, x, trace);
  }
  auto spec = specOf(4);
  spec.dModel = c.model.dModel;
  watch::WatchedRun w(dir.file("lab.db"), spec);
  w.forward(10, trace, x, lab.probeLoss, /*matrix=*/true);
  auto s = store::RunStore::open(dir.file("lab.db"));
  EXPECT_EQ(s.layerSeries(w.runId(), metrics::kVariance).values, lab.variance);
  EXPECT_EQ(s.layerSeries(w.runId(), metrics::kAngularAdjacent).values, lab.angularAdjacent);
  EXPECT_EQ(s.layerSeries(w.runId(), metrics::kNormVarFfn).values, lab.normVarFfn);
  auto angular = s.matrix(w.runId(), metrics::kAngular, 10);
  ASSERT_TRUE(angular);
  EXPECT_EQ(angular->rows, 4);
  EXPECT_FLOAT_EQ(s.latestScalars(w.runId()).at(metrics::kLossProbe).value, lab.probeLoss);
  model::ForwardTrace shallow = trace;
  shallow.blockInputs.pop_back();
  shallow.blocks.pop_back();
  EXPECT_THROW(w.forward(20, shallow, x, 0, false), std::invalid_argument);
  EXPECT_THROW(w.layer(20, "grad_norm", {1.0f, 2.0f}), std::invalid_argument);
}

TEST(WatchedRun, EndsWithTheStatusGivenAndItsLengthRecorded) {
  test::TempDir dir;
  int64_t finished = 0, dropped = 0;
  {
    watch::WatchedRun w(dir.file("lab.db"), specOf(3));
    w.scalar(1, metrics::kLossTrain, 2.5);
    w.finish(store::RunStatus::Finished, 140);
    finished = w.runId();
    watch::WatchedRun left(dir.file("lab.db"), specOf(3));
    dropped = left.runId();
  }
  auto s = store::RunStore::open(dir.file("lab.db"));
  EXPECT_EQ(s.run(finished)->status, store::RunStatus::Finished);
  EXPECT_EQ(experiment::configOf(*s.run(finished)).optim.steps, 140);
  EXPECT_EQ(s.scalarSeries(finished, metrics::kLossTrain).size(), 1u);
  EXPECT_EQ(s.run(dropped)->status, store::RunStatus::Stopped);  // no finish(): stopped
}

TEST(WatchedRun, ALockedStoreKeepsTheRowsForTheNextWrite) {
  test::TempDir dir;
  watch::WatchedRun w(dir.file("lab.db"), specOf(3));
  sqlite3* locker = nullptr;
  ASSERT_EQ(sqlite3_open(dir.file("lab.db").c_str(), &locker), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(locker, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  w.scalar(1, metrics::kLossTrain, 3.0);
  EXPECT_FALSE(w.flush(true));
  EXPECT_FALSE(w.lastError().empty());
  EXPECT_EQ(w.failedWrites(), 1);
  sqlite3_exec(locker, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(locker);
  w.scalar(2, metrics::kLossTrain, 2.0);
  EXPECT_TRUE(w.flush(true));
  auto s = store::RunStore::open(dir.file("lab.db"));
  EXPECT_EQ(s.scalarSeries(w.runId(), metrics::kLossTrain).size(), 2u);
}

TEST(WatchedRun, TheLabRefusesToTrainIt) {
  test::TempDir dir;
  int64_t id = 0;
  {
    watch::WatchedRun w(dir.file("lab.db"), specOf(3));
    w.finish(store::RunStatus::Stopped, 5);
    id = w.runId();
  }
  auto s = store::RunStore::open(dir.file("lab.db"));
  try {
    experiment::requireResumable(s, id);
    FAIL() << "a watched run was resumable";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("Python training loop"), std::string::npos) << e.what();
  }
}

TEST(DepthScaleCheck, WarnsWhenADeclaredLnsRunsNormsAreNotScaled) {
  test::TempDir dir;
  auto rowsOf = [&](const std::string& scheme, bool scaled) {
    watch::WatchedRun w(dir.file("lab.db"), specOf(6, scheme));
    std::vector<float> var;
    for (int l = 1; l <= 6; ++l) var.push_back(scaled ? 1.0f / static_cast<float>(l) : 0.98f);
    w.layer(5, metrics::kNormVarAttn, var);
    w.layer(50, metrics::kNormVarAttn, std::vector<float>(6, 0.5f));  // later: not read
    w.finish(store::RunStatus::Finished, 50);
    return w.runId();
  };
  const auto lns = rowsOf("lns", true), dropped = rowsOf("lns", false),
             pre = rowsOf("pre_ln", false);
  auto s = store::RunStore::open(dir.file("lab.db"));
  EXPECT_NEAR(*experiment::normVarianceDepthSlope(s, lns), -1.0, 1e-6);
  EXPECT_NEAR(*experiment::normVarianceDepthSlope(s, dropped), 0.0, 1e-6);
  EXPECT_TRUE(experiment::makeRunReport(s, lns).warnings.empty());
  EXPECT_TRUE(experiment::makeRunReport(s, pre).warnings.empty());
  const auto w = experiment::makeRunReport(s, dropped).warnings;
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("declared LNS"), std::string::npos) << w[0];
}

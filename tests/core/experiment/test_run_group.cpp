// The run loop end to end on a small generated corpus: paired runs recorded in the store,
// divergence, stop-and-resume through checkpoints, bad data rejected before any run exists.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>

#include "data/corpus.h"
#include "experiment/run_config.h"
#include "experiment/run_group.h"
#include "model/decoder.h"
#include "support/model_fixtures.h"
#include "support/run_fixtures.h"
#include "support/temp_dir.h"
#include "train/thread_share.h"

using namespace depthlab;

namespace {

std::string writeCorpus(const test::TempDir& dir, size_t bytes = 60000) {
  return test::writeWordCorpus(dir, bytes);
}

experiment::ExperimentConfig tinyRun(const test::TempDir& dir) {
  auto c = test::smallConfig(3);
  c.data.corpus = writeCorpus(dir);
  c.optim.steps = 12;
  c.run.evalEvery = 5;
  c.name = "unit";
  return c;
}

}  // namespace

TEST(RunGroup, PairedRunsAreRecorded) {
  test::TempDir dir;
  auto store = store::RunStore::open(dir.file("runs.db"));
  auto c = tinyRun(dir);
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  int progressCalls = 0;
  o.onProgress = [&](const experiment::GroupProgress&) { ++progressCalls; };
  auto r = experiment::runGroup(c, store, o);
  ASSERT_EQ(r.members.size(), 2u);
  EXPECT_GE(progressCalls, 1);
  for (const auto& m : r.members) {
    auto run = store.run(m.runId);
    ASSERT_TRUE(run);
    EXPECT_EQ(run->status, store::RunStatus::Finished);
    EXPECT_EQ(run->groupName, "unit");
    EXPECT_EQ(store.scalarSeries(m.runId, "loss_train").size(), 12u);
    EXPECT_EQ(store.scalarSeries(m.runId, "lr").size(), 12u);
    EXPECT_EQ(store.scalarSeries(m.runId, "tokens_per_s").size(), 12u);
    auto val = store.scalarSeries(m.runId, "loss_val");
    ASSERT_EQ(val.size(), 3u);  // steps 5, 10 and the final 12
    EXPECT_EQ(val.back().step, 12);
    auto grads = store.layerSeries(m.runId, "grad_norm");
    EXPECT_EQ(grads.nLayers, 3);
    EXPECT_EQ(grads.steps.size(), 12u);
    // the final one, and the best-so-far ones at the validations (5, 10): all within the
    // last checkpointKeep + best + final
    auto ck = store.checkpoints(m.runId);
    ASSERT_FALSE(ck.empty());
    EXPECT_EQ(ck.back().step, 12);
    EXPECT_LE(ck.size(), static_cast<size_t>(c.run.checkpointKeep) + 2);
    auto cfg = nlohmann::json::parse(run->configJson);
    EXPECT_EQ(cfg["schemes"], nlohmann::json::array({m.scheme}));
    EXPECT_EQ(cfg["model"]["vocabSize"],
              257);  // from the byte tokenizer: 256 bytes + end of document
  }
  // Same batches: the two schemes' first losses are equal (identical weights, LNS factor 1
  // in block 1 only, so they differ but stay close); their lr series are identical.
  auto lr0 = store.scalarSeries(r.members[0].runId, "lr");
  auto lr1 = store.scalarSeries(r.members[1].runId, "lr");
  for (size_t i = 0; i < lr0.size(); ++i) EXPECT_DOUBLE_EQ(lr0[i].value, lr1[i].value);
}

TEST(RunGroup, DivergenceMarksTheRunAndStopsItCleanly) {
  test::TempDir dir;
  auto store = store::RunStore::open(dir.file("runs.db"));
  auto c = tinyRun(dir);
  c.schemes = {"post_ln", "pre_ln"};
  c.optim.lr = 1e30;  // guaranteed blow-up
  c.optim.warmupSteps = 0;
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  auto r = experiment::runGroup(c, store, o);
  bool anyDiverged = false;
  for (const auto& m : r.members) {
    auto run = store.run(m.runId);
    if (run->status == store::RunStatus::Diverged) {
      anyDiverged = true;
      ASSERT_TRUE(m.divergedAt);
      auto ev = store.events(m.runId);
      ASSERT_FALSE(ev.empty());
      EXPECT_NE(ev.back().message.find("diverged"), std::string::npos);
    } else {
      EXPECT_EQ(run->status, store::RunStatus::Finished);
    }
  }
  EXPECT_TRUE(anyDiverged);
}

TEST(RunGroup, StopCheckpointsThenResumeFinishesWithTheSameLosses) {
  test::TempDir dir;
  auto c = tinyRun(dir);
  c.schemes = {"lns"};
  c.run.evalEvery = 0;
  // Reference: straight through.
  auto refStore = store::RunStore::open(dir.file("ref.db"));
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt-ref");
  auto ref = experiment::runGroup(c, refStore, o);
  auto refLoss = refStore.scalarSeries(ref.members[0].runId, "loss_train");

  auto store = store::RunStore::open(dir.file("runs.db"));
  std::atomic<bool> stop{true};  // as if Ctrl-C arrived during the first step
  o.checkpointDir = dir.file("ckpt");
  o.stopFlag = &stop;
  auto first = experiment::runGroup(c, store, o);
  const int64_t id = first.members[0].runId;
  EXPECT_EQ(store.run(id)->status, store::RunStatus::Stopped);
  auto ck = store.checkpoints(id);
  ASSERT_EQ(ck.size(), 1u);
  EXPECT_EQ(ck[0].step, 0);  // the update in progress was abandoned, not half-applied
  EXPECT_EQ(store.scalarSeries(id, "loss_train").size(), 0u);
  o.stopFlag = nullptr;
  experiment::resumeRun(id, store, o);
  EXPECT_EQ(store.run(id)->status, store::RunStatus::Finished);
  auto loss = store.scalarSeries(id, "loss_train");
  ASSERT_EQ(loss.size(), refLoss.size());
  for (size_t i = 0; i < loss.size(); ++i) {
    EXPECT_EQ(loss[i].value, refLoss[i].value) << "step " << i;
  }
}

TEST(RunGroup, ResumingAFinishedRunSaysSoWithItsOwnLossesAndLoadsNothing) {
  test::TempDir dir;
  auto c = tinyRun(dir);
  c.schemes = {"pre_ln"};
  auto store = store::RunStore::open(dir.file("runs.db"));
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  const auto first = experiment::runGroup(c, store, o);
  const int64_t id = first.members[0].runId;
  ASSERT_EQ(store.run(id)->status, store::RunStatus::Finished);
  std::filesystem::remove(c.data.corpus);  // nothing may need the corpus now
  std::vector<std::string> notices;
  o.onNotice = [&](const std::string& n) { notices.push_back(n); };
  const auto again = experiment::resumeRun(id, store, o);
  ASSERT_EQ(again.members.size(), 1u);
  const auto& m = again.members[0];
  EXPECT_EQ(m.status, store::RunStatus::Finished);
  EXPECT_EQ(m.step, c.optim.steps);
  EXPECT_DOUBLE_EQ(m.lossTrain, first.members[0].lossTrain);  // had been 0
  ASSERT_TRUE(m.lossVal.has_value());
  EXPECT_DOUBLE_EQ(*m.lossVal, *first.members[0].lossVal);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_NE(notices[0].find("nothing to resume"), std::string::npos) << notices[0];
  EXPECT_EQ(store.run(id)->status, store::RunStatus::Finished);
}

// Killed after its last step's checkpoint but before the run was marked finished (the final
// evaluation and probes, or the status write, were under way): resume completes the end of the
// run instead of leaving it crashed with "nothing to resume".
TEST(RunGroup, ARunKilledAfterItsLastCheckpointIsFinishedByResume) {
  test::TempDir dir;
  auto c = tinyRun(dir);
  c.schemes = {"pre_ln"};
  auto store = store::RunStore::open(dir.file("runs.db"));
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  const auto first = experiment::runGroup(c, store, o);
  const int64_t id = first.members[0].runId;
  store.finishRun(id, store::RunStatus::Crashed);  // as the reaper marks a killed process's run
  std::vector<std::string> notices;
  o.onNotice = [&](const std::string& n) { notices.push_back(n); };
  const auto again = experiment::resumeRun(id, store, o);
  ASSERT_EQ(again.members.size(), 1u);
  EXPECT_EQ(again.members[0].status, store::RunStatus::Finished);
  EXPECT_EQ(store.run(id)->status, store::RunStatus::Finished);
  EXPECT_EQ(store.scalarSeries(id, "loss_train").size(), static_cast<size_t>(c.optim.steps));
  auto val = store.scalarSeries(id, "loss_val");
  ASSERT_FALSE(val.empty());
  EXPECT_EQ(val.back().step, c.optim.steps);
  EXPECT_DOUBLE_EQ(val.back().value,
                   *first.members[0].lossVal);  // the same weights, evaluated again
  for (const auto& n : notices) EXPECT_EQ(n.find("nothing to resume"), std::string::npos) << n;
}

TEST(RunGroup, AFinishedRunTrainsFurtherAsIfPlannedLongerWithTheScheduleItHad) {
  test::TempDir dir;
  auto c = tinyRun(dir);
  c.schemes = {"pre_ln"};
  c.optim.warmupSteps = 3;
  auto store = store::RunStore::open(dir.file("runs.db"));
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  const int64_t id = experiment::runGroup(c, store, o).members[0].runId;
  // Not past the checkpoint: refused, nothing changed.
  auto refused = o;
  refused.resumeToStep = 10;
  try {
    experiment::resumeRun(id, store, refused);
    ADD_FAILURE() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("has trained 12 steps"), std::string::npos) << e.what();
  }
  EXPECT_EQ(experiment::configOf(*store.run(id)).optim.steps, 12);
  // Further: 6 more steps, recorded in the config and the events.
  std::vector<std::string> notices;
  o.onNotice = [&](const std::string& n) { notices.push_back(n); };
  o.resumeToStep = 18;
  const auto further = experiment::resumeRun(id, store, o);
  EXPECT_EQ(further.members[0].step, 18);
  EXPECT_EQ(store.run(id)->status, store::RunStatus::Finished);
  const auto stored = experiment::configOf(*store.run(id));
  EXPECT_EQ(stored.optim.steps, 18);
  EXPECT_EQ(stored.optim.scheduleSteps, 12);
  ASSERT_FALSE(notices.empty());
  EXPECT_NE(notices[0].find("trained to 18 steps instead of 12"), std::string::npos) << notices[0];
  bool evented = false;
  for (const auto& e : store.events(id))
    evented = evented || e.message.find("instead of 12") != std::string::npos;
  EXPECT_TRUE(evented);
  EXPECT_EQ(store.checkpoints(id).back().step, 18);
  // The same as a run planned for 18 steps with the 12-step schedule: every loss and rate.
  auto planned = c;
  planned.optim.steps = 18;
  planned.optim.scheduleSteps = 12;
  planned.name = "planned";
  experiment::RunGroupOptions po;
  po.checkpointDir = dir.file("ckpt2");
  const int64_t ref = experiment::runGroup(planned, store, po).members[0].runId;
  for (const char* key : {"loss_train", "lr"}) {
    const auto a = store.scalarSeries(id, key), b = store.scalarSeries(ref, key);
    ASSERT_EQ(a.size(), 18u) << key;
    ASSERT_EQ(b.size(), 18u) << key;
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].value, b[i].value) << key << " step " << i;
  }
  const auto lr = store.scalarSeries(id, "lr");
  for (size_t i = 12; i < 18; ++i) EXPECT_NEAR(lr[i].value, c.optim.lr * c.optim.minLrRatio, 1e-12);
}

TEST(RunGroup, StopRequestedThroughTheStoreStopsTheRun) {
  test::TempDir dir;
  auto c = tinyRun(dir);
  c.schemes = {"pre_ln"};
  c.optim.steps = 100000;
  auto store = store::RunStore::open(dir.file("runs.db"));
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  // A "viewer" connection asks for the stop, as the lab window does.
  auto viewer = store::RunStore::open(dir.file("runs.db"));
  o.onProgress = [&](const experiment::GroupProgress& p) {
    for (const auto& m : p.members) viewer.requestStop(m.runId);
  };
  auto r = experiment::runGroup(c, store, o);
  EXPECT_EQ(store.run(r.members[0].runId)->status, store::RunStatus::Stopped);
  EXPECT_LT(r.members[0].step, 100000);
  auto ck = store.checkpoints(r.members[0].runId);
  ASSERT_FALSE(ck.empty());
  EXPECT_EQ(ck.back().step, r.members[0].step);
  EXPECT_LE(ck.size(), static_cast<size_t>(c.run.checkpointKeep) + 2);
}

TEST(RunGroup, BadCorporaFailBeforeAnyRunIsCreated) {
  test::TempDir dir;
  auto store = store::RunStore::open(dir.file("runs.db"));
  auto c = tinyRun(dir);
  experiment::RunGroupOptions o;
  auto expectError = [&](const std::string& corpus, const std::string& needle) {
    c.data.corpus = corpus;
    try {
      experiment::runGroup(c, store, o);
      ADD_FAILURE() << corpus << " should be rejected";
    } catch (const data::DataError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
    EXPECT_TRUE(store.listRuns().empty());
  };
  expectError(dir.file("missing.txt"), "does not exist");
  test::writeFile(dir.file("empty.txt"), "");
  expectError(dir.file("empty.txt"), "empty");
  test::writeFile(dir.file("blank.txt"), "  \n\n ");
  expectError(dir.file("blank.txt"), "empty");
  std::string bin;
  for (int i = 0; i < 4000; ++i) bin.push_back(static_cast<char>(i % 256));
  test::writeFile(dir.file("model.pt"), bin);
  expectError(dir.file("model.pt"), "does not look like UTF-8 text");
  test::writeFile(dir.file("short.txt"), "In the beginning.\n");
  expectError(dir.file("short.txt"), "corpus too short");
  std::filesystem::create_directories(dir.file("emptydir"));
  expectError(dir.file("emptydir"), "holds no files");
  c.data.corpus = writeCorpus(dir);
  c.model.nHeads = 5;
  EXPECT_THROW(experiment::runGroup(c, store, o), experiment::ConfigError);
  EXPECT_TRUE(store.listRuns().empty());
}

TEST(RunGroup, ProbesDoNotChangeTrainingBitForBit) {
  test::TempDir dir;
  auto c = tinyRun(dir);
  c.optim.steps = 20;
  c.run.evalEvery = 0;
  c.probes.forwardEvery = 3;
  c.probes.angularMatrixEvery = 5;
  c.probes.pruningEvery = 7;
  c.probes.jacobianEvery = 10;
  auto off = c;
  off.probes.forwardEvery = off.probes.angularMatrixEvery = off.probes.pruningEvery = 0;
  off.probes.jacobianEvery = 0;
  off.probes.lensEvery = 0;
  off.probes.spectraAtEnd = false;
  off.probes.blockPruningAtEnd = false;
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  auto withStore = store::RunStore::open(dir.file("with.db"));
  auto withoutStore = store::RunStore::open(dir.file("without.db"));
  auto with = experiment::runGroup(c, withStore, o);
  auto without = experiment::runGroup(off, withoutStore, o);
  ASSERT_GT(with.probeSeconds, 0);
  EXPECT_EQ(without.probeSeconds, 0);
  for (size_t i = 0; i < with.members.size(); ++i) {
    auto a = withStore.scalarSeries(with.members[i].runId, "loss_train");
    auto b = withoutStore.scalarSeries(without.members[i].runId, "loss_train");
    ASSERT_EQ(a.size(), 20u);
    ASSERT_EQ(a.size(), b.size());
    for (size_t s = 0; s < a.size(); ++s) EXPECT_EQ(a[s].value, b[s].value) << "step " << s;
    EXPECT_TRUE(withoutStore.layerMetrics(without.members[i].runId) ==
                std::vector<std::string>{"grad_norm"});
  }
}

TEST(RunGroup, ProbeRowsHaveLValuesAndLxLMatrices) {
  test::TempDir dir;
  auto c = tinyRun(dir);  // 3 layers, 12 steps
  c.probes.forwardEvery = 4;
  c.probes.angularMatrixEvery = 6;
  auto store = store::RunStore::open(dir.file("runs.db"));
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  auto r = experiment::runGroup(c, store, o);
  const int64_t id = r.members[1].runId;
  for (const char* metric : {"variance", "norm_var_attn", "norm_var_ffn", "angular_adjacent",
                             "block_influence", "effectiveness", "prune_delta", "grad_norm"}) {
    auto s = store.layerSeries(id, metric);
    EXPECT_EQ(s.nLayers, 3) << metric;
    EXPECT_FALSE(s.steps.empty()) << metric;
  }
  // Every 4 steps, plus step 6 where the angular matrix's forward pass comes with them free.
  EXPECT_EQ(store.layerSeries(id, "variance").steps, (std::vector<int64_t>{0, 4, 6, 8, 12}));
  for (const char* kind : {"angular", "block_prune"}) {
    auto m = store.matrix(id, kind, 12);
    ASSERT_TRUE(m) << kind;
    EXPECT_EQ(m->rows, 3);
    EXPECT_EQ(m->cols, 3);
    EXPECT_TRUE(std::isnan(m->data[2 * 3 + 1]));  // l = 2, n = 2: past the last block
  }
  EXPECT_EQ(store.matrixSteps(id, "angular"), (std::vector<int64_t>{0, 6, 12}));
  EXPECT_EQ(store.matrixSteps(id, "block_prune"), (std::vector<int64_t>{12}));
  EXPECT_TRUE(store.latestScalars(id).count("lazy_layers"));
}

TEST(RunGroup, ProbesBesideTrainingStoreWhatInlineProbesStore) {
  test::TempDir dir;
  auto c = tinyRun(dir);  // 3 layers, 12 steps, a validation every 5 (new bests checkpoint)
  c.run.threads = 1;
  c.run.checkpointEvery = 4;
  c.probes.forwardEvery = 2;
  c.probes.angularMatrixEvery = 3;
  c.probes.pruningEvery = 4;
  c.probes.jacobianEvery = 6;
  auto inlineConfig = c;
  inlineConfig.probes.besideTraining = false;
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  auto besideStore = store::RunStore::open(dir.file("beside.db"));
  auto inlineStore = store::RunStore::open(dir.file("inline.db"));
  auto beside = experiment::runGroup(c, besideStore, o);
  auto inlined = experiment::runGroup(inlineConfig, inlineStore, o);
  EXPECT_EQ(inlined.probeBesideSeconds, 0);
  if (train::cpuCores() >= 2) {
    EXPECT_GT(beside.probeBesideSeconds, 0);  // a core was spare: they ran there
  } else {
    EXPECT_EQ(beside.probeBesideSeconds, 0);  // no core to spare: inline
  }
  ASSERT_EQ(beside.members.size(), inlined.members.size());
  for (size_t i = 0; i < beside.members.size(); ++i) {
    const int64_t a = beside.members[i].runId, b = inlined.members[i].runId;
    const auto metrics = besideStore.layerMetrics(a);
    EXPECT_EQ(metrics, inlineStore.layerMetrics(b));
    EXPECT_TRUE(std::count(metrics.begin(), metrics.end(), "jacobian_identity"));
    for (const auto& metric : metrics) {  // the same rows at the same steps, bit for bit
      auto x = besideStore.layerSeries(a, metric), y = inlineStore.layerSeries(b, metric);
      EXPECT_EQ(x.steps, y.steps) << metric;
      ASSERT_EQ(x.values.size(), y.values.size()) << metric;
      EXPECT_EQ(std::memcmp(x.values.data(), y.values.data(), x.values.size() * sizeof(float)), 0)
          << metric;
    }
    for (const char* kind : {"angular", "block_prune"}) {
      EXPECT_EQ(besideStore.matrixSteps(a, kind), inlineStore.matrixSteps(b, kind));
      for (int64_t step : besideStore.matrixSteps(a, kind)) {
        auto x = besideStore.matrix(a, kind, step), y = inlineStore.matrix(b, kind, step);
        ASSERT_TRUE(x && y);
        EXPECT_EQ(std::memcmp(x->data.data(), y->data.data(), x->data.size() * sizeof(float)), 0)
            << kind << " " << step;
      }
    }
    for (const char* key : {"loss_train", "loss_val", "loss_probe", "lazy_layers"}) {
      auto x = besideStore.scalarSeries(a, key), y = inlineStore.scalarSeries(b, key);
      ASSERT_EQ(x.size(), y.size()) << key;
      for (size_t s = 0; s < x.size(); ++s) {
        EXPECT_EQ(x[s].step, y[s].step) << key;
        EXPECT_EQ(x[s].value, y[s].value) << key << " at step " << x[s].step;
      }
    }
  }
}

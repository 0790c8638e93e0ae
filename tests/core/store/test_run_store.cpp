// Round trips for every run-store table, change tracking and deletes.
#include <gtest/gtest.h>

#include <cmath>

#include "store/run_store.h"
#include "support/temp_dir.h"

using namespace depthlab::store;

namespace {

int64_t makeRun(RunStore& s, const std::string& name = "r", const std::string& scheme = "lns") {
  NewRun nr;
  nr.name = name;
  nr.groupName = "g1";
  nr.scheme = scheme;
  nr.configJson = R"({"depth":12})";
  nr.device = "cpu";
  nr.seed = 7;
  return s.createRun(nr);
}

}  // namespace

TEST(RunStore, RunRoundTrip) {
  auto s = RunStore::open(":memory:");
  int64_t id = makeRun(s, "pre vs lns");
  auto r = s.run(id);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->name, "pre vs lns");
  EXPECT_EQ(r->groupName, "g1");
  EXPECT_EQ(r->scheme, "lns");
  EXPECT_EQ(r->configJson, R"({"depth":12})");
  EXPECT_EQ(r->device, "cpu");
  EXPECT_EQ(r->seed, 7);
  EXPECT_EQ(r->status, RunStatus::Queued);
  EXPECT_GT(r->createdAt, 1.6e9);
  EXPECT_FALSE(r->finishedAt);

  s.markRunning(id);
  r = s.run(id);
  EXPECT_EQ(r->status, RunStatus::Running);
  EXPECT_TRUE(r->startedAt);
  EXPECT_GT(r->pid, 0);
  s.finishRun(id, RunStatus::Diverged);
  r = s.run(id);
  EXPECT_EQ(r->status, RunStatus::Diverged);
  EXPECT_TRUE(r->finishedAt);

  s.renameRun(id, "renamed");
  s.addTag(id, "b");
  s.addTag(id, "a");
  s.addTag(id, "a");
  s.setNotes(id, "deep layers lazy?");
  r = s.run(id);
  EXPECT_EQ(r->name, "renamed");
  EXPECT_EQ(r->tags, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r->notes, "deep layers lazy?");
  s.removeTag(id, "a");
  EXPECT_EQ(s.run(id)->tags, (std::vector<std::string>{"b"}));
  EXPECT_FALSE(s.run(id + 100));
}

TEST(RunStore, StatusStrings) {
  for (auto st : {RunStatus::Queued, RunStatus::Running, RunStatus::Finished, RunStatus::Stopped,
                  RunStatus::Diverged, RunStatus::Crashed}) {
    EXPECT_EQ(runStatusFromString(toString(st)), st);
  }
  EXPECT_FALSE(runStatusFromString("bogus"));
}

TEST(RunStore, ScalarLayerMatrixEventRoundTrip) {
  auto s = RunStore::open(":memory:");
  int64_t id = makeRun(s);
  WriteBatch b;
  for (int step = 0; step < 10; ++step) {
    b.scalar(step, "loss_train", 5.0 - step * 0.1);
    b.layer(step, "variance", {1.0f * step, 2.0f, 3.5f});
  }
  b.scalar(9, "loss_val", 4.2);
  b.matrix(5, "angular", 2, 3, {0.1f, 0.2f, NAN, 0.4f, 0.5f, 0.6f});
  b.event(3, EventLevel::Warning, "loss spike");
  s.write(id, b);

  auto loss = s.scalarSeries(id, "loss_train");
  ASSERT_EQ(loss.size(), 10u);
  EXPECT_EQ(loss[3].step, 3);
  EXPECT_DOUBLE_EQ(loss[3].value, 5.0 - 0.3);
  EXPECT_EQ(s.scalarSeries(id, "loss_train", 2, 4).size(), 3u);
  EXPECT_EQ(s.scalarKeys(id), (std::vector<std::string>{"loss_train", "loss_val"}));
  auto latest = s.latestScalars(id);
  EXPECT_EQ(latest["loss_train"].step, 9);
  EXPECT_DOUBLE_EQ(latest["loss_train"].value, 5.0 - 0.9);

  auto var = s.layerSeries(id, "variance");
  EXPECT_EQ(var.nLayers, 3);
  ASSERT_EQ(var.steps.size(), 10u);
  EXPECT_FLOAT_EQ(var.values[7 * 3 + 0], 7.0f);
  EXPECT_FLOAT_EQ(var.values[7 * 3 + 2], 3.5f);
  EXPECT_EQ(s.layerSeries(id, "variance", 8).steps.size(), 2u);
  EXPECT_EQ(s.layerMetrics(id), (std::vector<std::string>{"variance"}));

  auto m = s.matrix(id, "angular", 5);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->rows, 2);
  EXPECT_EQ(m->cols, 3);
  EXPECT_FLOAT_EQ(m->data[4], 0.5f);
  EXPECT_TRUE(std::isnan(m->data[2]));
  EXPECT_TRUE(s.matrix(id, "angular", 100));  // latest at or before the step
  EXPECT_FALSE(s.matrix(id, "angular", 4));
  EXPECT_EQ(s.matrixSteps(id, "angular"), (std::vector<int64_t>{5}));
  EXPECT_EQ(s.matrixKinds(id), (std::vector<std::string>{"angular"}));

  auto ev = s.events(id);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].level, EventLevel::Warning);
  EXPECT_EQ(ev[0].message, "loss spike");
  EXPECT_EQ(ev[0].step, 3);
  EXPECT_TRUE(s.events(id, ev[0].id).empty());

  s.addCheckpoint(id, {100, "/tmp/ckpt-100.pt", "abc123", 1.7e9});
  auto ck = s.checkpoints(id);
  ASSERT_EQ(ck.size(), 1u);
  EXPECT_EQ(ck[0].step, 100);
  EXPECT_EQ(ck[0].path, "/tmp/ckpt-100.pt");
  EXPECT_EQ(ck[0].checksum, "abc123");
}

TEST(RunStore, LatestScalarsAndLastLayerStepFindEachKeysLastRowOfTheirRunOnly) {
  auto s = RunStore::open(":memory:");
  const int64_t a = makeRun(s, "a"), b = makeRun(s, "b");
  WriteBatch wa, wb;
  for (int step = 0; step < 300; ++step) {
    wa.scalar(step, "loss_train", 1000.0 + step);
    if (step % 7 == 0) wa.scalar(step, "loss_val", 2000.0 + step);  // last at 294
    if (step < 40) wa.scalar(step, "lr", 3000.0 + step);             // a key only run a has
    wb.scalar(step + 1000, "loss_train", -1.0 * step);               // run b: later steps
    if (step % 10 == 0) wa.layer(step, "variance", {static_cast<float>(step), 1.0f});
  }
  wb.layer(5000, "variance", {9.0f, 9.0f});
  s.write(a, wa);
  s.write(b, wb);
  const auto la = s.latestScalars(a);
  ASSERT_EQ(la.size(), 3u);
  EXPECT_EQ(la.at("loss_train").step, 299);
  EXPECT_DOUBLE_EQ(la.at("loss_train").value, 1299.0);
  EXPECT_EQ(la.at("loss_val").step, 294);
  EXPECT_DOUBLE_EQ(la.at("loss_val").value, 2294.0);
  EXPECT_EQ(la.at("lr").step, 39);
  EXPECT_DOUBLE_EQ(la.at("lr").value, 3039.0);
  const auto lb = s.latestScalars(b);
  ASSERT_EQ(lb.size(), 1u);
  EXPECT_EQ(lb.at("loss_train").step, 1299);
  EXPECT_DOUBLE_EQ(lb.at("loss_train").value, -299.0);
  EXPECT_TRUE(s.latestScalars(a + b + 1).empty());

  EXPECT_EQ(s.lastLayerStep(a, "variance"), std::optional<int64_t>(290));
  EXPECT_EQ(s.lastLayerStep(b, "variance"), std::optional<int64_t>(5000));
  EXPECT_EQ(s.lastLayerStep(a, "prune_delta"), std::nullopt);
  const auto last = s.layerSeries(a, "variance", 290, 290);
  ASSERT_EQ(last.steps, std::vector<int64_t>{290});
  EXPECT_FLOAT_EQ(last.values[0], 290.0f);
}

TEST(RunStore, ASampledLayerSeriesHoldsTheRowNearestEachEvenlySpacedPosition) {
  auto s = RunStore::open(":memory:");
  const int64_t a = makeRun(s, "a"), b = makeRun(s, "b");
  WriteBatch wa, wb;
  std::vector<int64_t> steps;  // uneven: 0, 1, 4, 9, ..., 9801
  for (int k = 0; k < 100; ++k) {
    steps.push_back(int64_t{k} * k);
    wa.layer(steps.back(), "variance", {static_cast<float>(k), -static_cast<float>(k)});
    wb.layer(steps.back() + 1, "variance", {1000.0f, 1000.0f});  // another run's rows, between a's
  }
  for (int k = 0; k <= 2; ++k) wa.layer(10 * k, "grad_norm", {static_cast<float>(k)});
  s.write(a, wa);
  s.write(b, wb);
  for (int samples : {1, 2, 7, 40, 100, 400}) {
    // Reference: the full series, the nearest step to each position (a tie to the later one),
    // each row once.
    std::vector<int64_t> want;
    const double x0 = 0, x1 = static_cast<double>(steps.back());
    for (int c = 0; c < samples; ++c) {
      const double x = samples > 1 ? x0 + (x1 - x0) * c / (samples - 1) : x0;
      size_t best = 0;
      for (size_t i = 1; i < steps.size(); ++i) {
        if (std::abs(static_cast<double>(steps[i]) - x) <= std::abs(static_cast<double>(steps[best]) - x)) best = i;
      }
      if (want.empty() || want.back() != steps[best]) want.push_back(steps[best]);
    }
    const auto got = s.layerSeriesSampled(a, "variance", samples);
    EXPECT_EQ(got.steps, want) << samples << " samples";
    ASSERT_EQ(got.nLayers, 2);
    ASSERT_EQ(got.values.size(), 2 * got.steps.size());
    for (size_t i = 0; i < got.steps.size(); ++i) {
      const float k = std::sqrt(static_cast<float>(got.steps[i]));
      EXPECT_FLOAT_EQ(got.values[2 * i], k);
      EXPECT_FLOAT_EQ(got.values[2 * i + 1], -k);
    }
  }
  // Ties go to the later step: positions 0, 5, 10, 15, 20 over rows at 0, 10, 20.
  EXPECT_EQ(s.layerSeriesSampled(a, "grad_norm", 5).steps, (std::vector<int64_t>{0, 10, 20}));
  EXPECT_EQ(s.layerSeriesSampled(a, "grad_norm", 2).steps, (std::vector<int64_t>{0, 20}));
  EXPECT_TRUE(s.layerSeriesSampled(a, "prune_delta", 400).steps.empty());
  EXPECT_TRUE(s.layerSeriesSampled(a + b + 1, "variance", 400).steps.empty());
}

TEST(RunStore, MatrixShapeMismatchIsRejected) {
  auto s = RunStore::open(":memory:");
  int64_t id = makeRun(s);
  WriteBatch b;
  b.matrix(1, "angular", 2, 2, {1.0f, 2.0f, 3.0f});  // a catalogued kind, the wrong size
  EXPECT_THROW(s.write(id, b), StoreError);
  EXPECT_TRUE(s.matrixKinds(id).empty());  // the whole batch rolled back
}

TEST(RunStore, ChangeTrackingNamesChangedRuns) {
  auto s = RunStore::open(":memory:");
  int64_t a = makeRun(s, "a");
  int64_t b = makeRun(s, "b");
  int64_t since = s.changeCounter();
  EXPECT_TRUE(s.runsChangedSince(since).empty());
  WriteBatch batch;
  batch.scalar(1, "loss_train", 1.0);
  s.write(b, batch);
  EXPECT_EQ(s.runsChangedSince(since), (std::vector<int64_t>{b}));
  EXPECT_GT(s.changeCounter(), since);
  s.addTag(a, "x");
  EXPECT_EQ(s.runsChangedSince(since), (std::vector<int64_t>{a, b}));
}

TEST(RunStore, DeleteRemovesTheRunsRowsAndNothingElse) {
  auto s = RunStore::open(":memory:");
  int64_t a = makeRun(s, "a");
  int64_t b = makeRun(s, "b");
  for (int64_t id : {a, b}) {
    WriteBatch w;
    w.scalar(1, "loss_train", 1.0);
    w.layer(1, "variance", {1, 2});
    w.matrix(1, "angular", 1, 1, {0.5f});
    w.event(1, EventLevel::Info, "hi");
    s.write(id, w);
    s.addCheckpoint(id, {1, "p", "", 0});
    s.addTag(id, "t");
  }
  EXPECT_TRUE(s.deleteRun(a));
  EXPECT_FALSE(s.deleteRun(a));
  EXPECT_FALSE(s.run(a));
  EXPECT_TRUE(s.scalarSeries(a, "loss_train").empty());
  EXPECT_TRUE(s.layerSeries(a, "variance").steps.empty());
  EXPECT_TRUE(s.matrixKinds(a).empty());
  EXPECT_TRUE(s.events(a).empty());
  EXPECT_TRUE(s.checkpoints(a).empty());
  EXPECT_EQ(s.scalarSeries(b, "loss_train").size(), 1u);
  EXPECT_EQ(s.layerSeries(b, "variance").steps.size(), 1u);
  EXPECT_EQ(s.matrixKinds(b).size(), 1u);
  EXPECT_EQ(s.events(b).size(), 1u);
  EXPECT_EQ(s.checkpoints(b).size(), 1u);
  EXPECT_EQ(s.run(b)->tags.size(), 1u);
}

TEST(RunStore, StopRequestRoundTrip) {
  auto s = RunStore::open(":memory:");
  int64_t id = makeRun(s);
  s.markRunning(id);
  EXPECT_FALSE(s.stopRequested(id));
  s.requestStop(id);
  EXPECT_TRUE(s.stopRequested(id));
  s.markRunning(id);  // a resumed run starts without the old request
  EXPECT_FALSE(s.stopRequested(id));
}

TEST(RunStore, AResumedRunsDurationLeavesOutItsPause) {
  depthlab::test::TempDir dir;
  auto path = dir.file("runs.db");
  auto s = RunStore::open(path);
  int64_t id = makeRun(s);
  EXPECT_FALSE(trainingSeconds(*s.run(id)));  // not started
  s.markRunning(id);
  s.finishRun(id, RunStatus::Finished);
  EXPECT_DOUBLE_EQ(s.run(id)->pausedSeconds, 0.0);
  {  // it had trained 100 s and finished 1000 s ago (another process: the file)
    SqliteDb db(path, SQLITE_OPEN_READWRITE);
    db.exec("UPDATE runs SET started_at = finished_at - 1100, finished_at = finished_at - 1000");
  }
  EXPECT_NEAR(*trainingSeconds(*s.run(id)), 100, 1e-6);
  s.markRunning(id);  // trained further now
  EXPECT_NEAR(s.run(id)->pausedSeconds, 1000, 2);
  s.finishRun(id, RunStatus::Finished);
  const auto r = *s.run(id);
  EXPECT_NEAR(*trainingSeconds(r), 100, 2) << "not the ~1100 s since it first started";
  EXPECT_NEAR(*r.finishedAt - *r.startedAt, 1100, 2);  // the start keeps its meaning
}

TEST(RunStore, FileIsWalWithForeignKeysAndAppId) {
  depthlab::test::TempDir dir;
  auto path = dir.file("runs.db");
  {
    auto s = RunStore::open(path);
    makeRun(s);
    EXPECT_EQ(s.schemaVersion(), RunStore::latestSchemaVersion());
  }
  SqliteDb db(path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(db.queryText("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(db.queryInt("PRAGMA application_id"), 0x44504C42);
  EXPECT_EQ(db.queryInt("SELECT count(*) FROM runs"), 1);
}

TEST(RunStore, ReadOnlyRejectsWrites) {
  depthlab::test::TempDir dir;
  auto path = dir.file("runs.db");
  { auto s = RunStore::open(path); makeRun(s); }
  auto ro = RunStore::open(path, RunStore::Mode::ReadOnly);
  EXPECT_EQ(ro.listRuns().size(), 1u);
  EXPECT_THROW(makeRun(ro), StoreError);
  EXPECT_THROW(RunStore::open(dir.file("absent.db"), RunStore::Mode::ReadOnly), StoreError);
}

TEST(RunStore, RunSummariesGiveEachRunsLastTrainAndValidationLoss) {
  auto s = RunStore::open(":memory:");
  int64_t a = makeRun(s, "a"), b = makeRun(s, "b");
  WriteBatch w;
  w.scalar(0, "loss_train", 5);
  w.scalar(9, "loss_train", 4);
  w.scalar(10, "loss_val", 3.5);
  s.write(a, w);
  const int64_t c = makeRun(s, "c"), d = makeRun(s, "d");
  WriteBatch wc, wd;
  for (int step = 0; step < 500; ++step) {
    wc.scalar(step, "loss_train", 100.0 - 0.1 * step);
    wc.scalar(step, "lr", 1.0);  // other keys do not count
    if (step % 50 == 0) wc.scalar(step, "loss_val", 200.0 - step);
  }
  wc.scalar(600, "lr", 0.5);
  wd.scalar(7, "loss_val", 2.5);  // validation only
  s.write(c, wc);
  s.write(d, wd);
  auto sum = s.runSummaries();
  EXPECT_EQ(sum[a].lastStep, 9);
  EXPECT_DOUBLE_EQ(*sum[a].lossVal, 3.5);
  EXPECT_EQ(sum[a].lossValStep, 10);
  EXPECT_FALSE(sum.count(b));
  EXPECT_EQ(sum.at(c).lastStep, 499);
  EXPECT_DOUBLE_EQ(*sum.at(c).lossVal, 200.0 - 450);
  EXPECT_EQ(sum.at(c).lossValStep, 450);
  EXPECT_EQ(sum.at(d).lastStep, -1);
  EXPECT_DOUBLE_EQ(*sum.at(d).lossVal, 2.5);
  EXPECT_EQ(sum.size(), 3u);
}

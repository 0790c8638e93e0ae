// A reader on a second connection sees consistent batches while a writer commits; a process
// killed with SIGKILL mid-run loses nothing it committed, and its run shows as crashed.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "store/run_store.h"
#include "support/temp_dir.h"

using namespace depthlab::store;

namespace {
constexpr int kLayers = 24;
constexpr int kStepsPerBatch = 50;

WriteBatch makeBatch(int batchIndex) {
  WriteBatch b;
  for (int i = 0; i < kStepsPerBatch; ++i) {
    int step = batchIndex * kStepsPerBatch + i;
    b.scalar(step, "loss_train", static_cast<double>(step));
    b.layer(step, "variance", std::vector<float>(kLayers, static_cast<float>(step)));
  }
  return b;
}
}  // namespace

TEST(RunStoreConcurrency, ReaderSeesWholeBatchesOnly) {
  depthlab::test::TempDir dir;
  auto path = dir.file("runs.db");
  auto writer = RunStore::open(path);
  NewRun nr;
  nr.name = "w";
  const int64_t id = writer.createRun(nr);
  std::atomic<bool> done{false};
  std::atomic<int> checks{0}, bad{0};
  std::thread reader([&] {
    auto r = RunStore::open(path, RunStore::Mode::ReadOnly);
    while (!done.load()) {
      auto loss = r.scalarSeries(id, "loss_train");
      auto var = r.layerSeries(id, "variance");
      // Within one read transaction-free pair the layer series may be newer, never torn:
      if (loss.size() % kStepsPerBatch != 0) ++bad;
      if (var.steps.size() % kStepsPerBatch != 0) ++bad;
      for (size_t i = 0; i < var.steps.size(); ++i) {
        if (var.values[i * kLayers + kLayers - 1] != static_cast<float>(var.steps[i])) ++bad;
      }
      ++checks;
    }
  });
  for (int b = 0; b < 60; ++b) writer.write(id, makeBatch(b));
  done = true;
  reader.join();
  EXPECT_GT(checks.load(), 0);
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(writer.scalarSeries(id, "loss_train").size(), 60u * kStepsPerBatch);
}

TEST(RunStoreConcurrency, SigkillMidRunKeepsCommittedBatchesAndShowsCrashed) {
  depthlab::test::TempDir dir;
  auto path = dir.file("runs.db");
  int64_t id;
  { auto s = RunStore::open(path); NewRun nr; nr.name = "victim"; id = s.createRun(nr); }

  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    auto s = RunStore::open(path);
    s.markRunning(id);
    for (int b = 0;; ++b) {
      s.write(id, makeBatch(b));
      int committed = b + 1;
      if (write(fds[1], &committed, sizeof(committed)) != sizeof(committed)) _exit(3);
    }
  }
  close(fds[1]);
  int committed = 0, value = 0;
  while (committed < 20 && read(fds[0], &value, sizeof(value)) == sizeof(value)) committed = value;
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  while (read(fds[0], &value, sizeof(value)) == sizeof(value)) committed = value;
  close(fds[0]);
  ASSERT_TRUE(WIFSIGNALED(status));

  auto s = RunStore::open(path);
  EXPECT_EQ(s.integrityCheck(), "ok");
  auto loss = s.scalarSeries(id, "loss_train");
  EXPECT_GE(loss.size(), static_cast<size_t>(committed) * kStepsPerBatch);
  EXPECT_EQ(loss.size() % kStepsPerBatch, 0u);
  for (size_t i = 0; i < loss.size(); ++i) EXPECT_EQ(loss[i].step, static_cast<int64_t>(i));
  EXPECT_EQ(s.layerSeries(id, "variance").steps.size(), loss.size());
  EXPECT_EQ(s.run(id)->status, RunStatus::Running);
  auto reaped = s.reapCrashedRuns();
  EXPECT_EQ(reaped, std::vector<int64_t>{id});
  EXPECT_EQ(s.run(id)->status, RunStatus::Crashed);
  EXPECT_FALSE(s.events(id).empty());
}

TEST(RunStoreConcurrency, LiveRunIsNotReaped) {
  auto s = RunStore::open(":memory:");
  NewRun nr;
  nr.name = "alive";
  int64_t id = s.createRun(nr);
  s.markRunning(id);  // this very process
  EXPECT_TRUE(s.reapCrashedRuns().empty());
  EXPECT_EQ(s.run(id)->status, RunStatus::Running);
}

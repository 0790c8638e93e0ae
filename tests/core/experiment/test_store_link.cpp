// StoreLink against a disk that fills and frees (a file-size limit makes SQLite's writes fail as
// a full disk does): the queue waits in order, pruning's guard (recordedCheckpoint) follows only
// the checkpoint rows that landed, and the backlog drains once writes succeed again.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <csignal>
#include <filesystem>

#include "experiment/store_link.h"
#include "support/temp_dir.h"

using namespace depthlab;
namespace fs = std::filesystem;

TEST(StoreLink, ABacklogHeldByAFullDiskDrainsOnceSpaceReturns) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  store::NewRun nr;
  nr.name = "full";
  nr.scheme = "lns";
  nr.configJson = "{}";
  const int64_t id = s.createRun(nr);
  experiment::StoreLink link(s);
  link.addCheckpoint(id, {10, dir.file("step-10.ckpt"), "00", 1.0});
  ASSERT_TRUE(link.idle());
  EXPECT_EQ(link.recordedCheckpoint(id), 10);

  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto previous = std::signal(SIGXFSZ, SIG_IGN);
  std::error_code ec;
  const auto wal = fs::file_size(dir.file("runs.db-wal"), ec);
  rlimit full = old;
  full.rlim_cur = std::max<uint64_t>(fs::file_size(dir.file("runs.db")), ec ? 0 : wal) + 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &full), 0);
  int64_t step = 0;
  for (; step < 40000 && link.idle(); step += 200) {  // until the disk refuses
    store::WriteBatch b;
    for (int64_t k = step; k < step + 200; ++k) b.scalar(k, "loss_train", 1.0 + static_cast<double>(k));
    link.write(id, std::move(b));
  }
  const bool refused = !link.idle();
  link.addCheckpoint(id, {20, dir.file("step-20.ckpt"), "01", 2.0});
  for (int i = 0; i < 3; ++i) link.flush(true);
  const bool stillRefused = !link.idle();
  const auto guarded = link.recordedCheckpoint(id);
  setrlimit(RLIMIT_FSIZE, &old);  // space returns
  std::signal(SIGXFSZ, previous);
  ASSERT_TRUE(refused) << "the file-size limit never made a write fail";
  EXPECT_TRUE(stillRefused);
  EXPECT_EQ(guarded, 10);  // the row of step 20 waits: pruning keeps step 10's file
  EXPECT_TRUE(link.flush(true)) << link.lastError();
  EXPECT_EQ(link.recordedCheckpoint(id), 20);
  EXPECT_EQ(s.scalarSeries(id, "loss_train").size(), static_cast<size_t>(step));  // nothing lost
  EXPECT_EQ(s.checkpoints(id).back().step, 20);
  EXPECT_EQ(s.integrityCheck(), "ok");
}

// util::ExclusiveFileLock: a second holder on one path waits until the first lets go (and says
// so once), other paths do not wait, a stop flag ends the wait, an unopenable path holds nothing.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "support/eventually.h"
#include "support/temp_dir.h"
#include "util/file_lock.h"

using depthlab::util::ExclusiveFileLock;
using namespace std::chrono_literals;

TEST(FileLock, ASecondHolderWaitsUntilTheFirstLetsGo) {
  depthlab::test::TempDir dir;
  auto first = std::make_unique<ExclusiveFileLock>(dir.file("a.lock"));
  ASSERT_TRUE(first->held());
  std::atomic<int> waited{0};
  std::atomic<bool> got{false};
  std::thread second([&] {
    ExclusiveFileLock lock(dir.file("a.lock"), [&] { ++waited; });
    got = lock.held();
  });
  EXPECT_TRUE(depthlab::test::eventually([&] { return waited.load() == 1; }));
  std::this_thread::sleep_for(100ms);  // it goes on waiting
  EXPECT_FALSE(got.load());
  ExclusiveFileLock other(dir.file("b.lock"));  // another path: no wait
  EXPECT_TRUE(other.held());
  first.reset();
  second.join();
  EXPECT_TRUE(got.load());
  EXPECT_EQ(waited.load(), 1);  // said once, not once per poll
}

TEST(FileLock, AStopFlagEndsTheWaitAndAnUnopenablePathHoldsNothing) {
  depthlab::test::TempDir dir;
  ExclusiveFileLock first(dir.file("a.lock"));
  std::atomic<bool> stop{false}, waiting{false};
  bool held = true, stopped = false;
  std::thread second([&] {
    ExclusiveFileLock lock(dir.file("a.lock"), [&] { waiting = true; }, &stop);
    held = lock.held();
    stopped = lock.stopped();
  });
  EXPECT_TRUE(depthlab::test::eventually([&] { return waiting.load(); }));
  stop = true;
  second.join();
  EXPECT_FALSE(held);
  EXPECT_TRUE(stopped);
  ExclusiveFileLock nowhere(dir.file("no/such/folder/a.lock"));
  EXPECT_FALSE(nowhere.held());
  EXPECT_FALSE(nowhere.stopped());
}

// Preparations of one token store at the same time (the ranks of a data-parallel run, two
// launches on one corpus) take turns: one tokenizes, the others wait and find the store up to
// date, and a stop ends the wait.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "data/corpus_prepare.h"
#include "data/token_store.h"
#include "support/eventually.h"
#include "support/temp_dir.h"
#include "util/file_lock.h"

using namespace depthlab;
using namespace depthlab::data;
using namespace std::chrono_literals;

namespace {

std::string text(int lines) {
  std::string s;
  for (int i = 0; i < lines; ++i) s += "line " + std::to_string(i) + ": the deep layers idle.\n";
  return s;
}

PrepareOptions manyShards() {
  PrepareOptions o;
  o.chunkBytes = 4096;
  o.shardTokens = 20000;
  o.threads = 1;
  return o;
}

}  // namespace

TEST(CorpusPrepareTogether, OnePreparationTokenizesTheOthersWaitAndReuseIt) {
  test::TempDir dir;
  const std::string corpus = dir.file("c.txt");
  test::writeFile(corpus, text(20000));  // ~700 kB, dozens of shards
  std::vector<PrepareReport> reports(3);
  std::vector<std::thread> threads;
  for (auto& r : reports) {
    threads.emplace_back([&] { r = prepareCorpus(corpus, manyShards()); });
  }
  for (auto& t : threads) t.join();
  int tokenized = 0;
  for (const auto& r : reports) {
    tokenized += r.reused ? 0 : 1;
    EXPECT_EQ(r.tokens, reports[0].tokens);
  }
  EXPECT_EQ(tokenized, 1);
  EXPECT_EQ(openTokenStore(reports[0].storeDir)->readAll().size(), text(20000).size() + 1);
}

TEST(CorpusPrepareTogether, APreparationWaitsForTheLockAndAStopEndsTheWait) {
  test::TempDir dir;
  const std::string corpus = dir.file("c.txt");
  test::writeFile(corpus, text(200));
  const std::string store = corpus + ".byte.dlstore";
  std::filesystem::create_directories(store);
  auto held = std::make_unique<util::ExclusiveFileLock>(store + "/" + kPrepareLockName);
  ASSERT_TRUE(held->held());

  std::atomic<bool> stop{false}, saidWaiting{false};
  PrepareOptions o = manyShards();
  o.stop = &stop;
  o.phase = [&](const std::string& s) {
    if (s.rfind("waiting for another process preparing the token store", 0) == 0) saidWaiting = true;
  };
  PrepareReport stopped;
  std::thread first([&] { stopped = prepareCorpus(corpus, o); });
  EXPECT_TRUE(test::eventually([&] { return saidWaiting.load(); }));
  EXPECT_FALSE(isTokenStore(store));  // nothing written while it waits
  stop = true;
  first.join();
  EXPECT_TRUE(stopped.interrupted);
  EXPECT_EQ(stopped.shards, 0u);

  stop = false;
  saidWaiting = false;
  PrepareReport done;
  std::thread second([&] { done = prepareCorpus(corpus, o); });
  EXPECT_TRUE(test::eventually([&] { return saidWaiting.load(); }));
  EXPECT_FALSE(isTokenStore(store));
  held.reset();  // the other preparation lets go
  second.join();
  EXPECT_FALSE(done.interrupted);
  EXPECT_FALSE(done.reused);
  EXPECT_EQ(openTokenStore(store)->readAll().size(), text(200).size() + 1);
}

// A damaged token store is not "up to date": a shard deleted or truncated is found by its size
// and header, one whose bytes changed by `--verify`'s hashes, and the store is tokenized again
// from the first damaged shard on (the sound ones before it kept), ending as it was.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "data/corpus_prepare.h"
#include "data/store_check.h"
#include "data/token_store.h"
#include "support/temp_dir.h"

using namespace depthlab;
using namespace depthlab::data;
namespace fs = std::filesystem;

namespace {

PrepareOptions severalShards() {
  PrepareOptions o;
  o.chunkBytes = 700;
  o.shardTokens = 2000;
  o.threads = 2;
  return o;
}

std::string corpus(const test::TempDir& dir) {
  std::string s;
  for (int i = 0; i < 300; ++i) s += "line " + std::to_string(i) + ": the deep layers idle.\n";
  test::writeFile(dir.file("c.txt"), s);
  return dir.file("c.txt");
}

std::string shard(const PrepareReport& r, int n) { return r.storeDir + "/" + shardFileName(n); }

}  // namespace

TEST(StoreDamage, ATruncatedShardIsTokenizedAgainFromThereOn) {
  test::TempDir dir;
  const auto first = prepareCorpus(corpus(dir), severalShards());
  ASSERT_GT(first.shards, 3u);
  const auto tokens = openTokenStore(first.storeDir)->readAll();
  fs::resize_file(shard(first, 2), fs::file_size(shard(first, 2)) - 10);
  auto index = readStoreIndex(first.storeDir);
  const auto damage = firstDamagedShard(first.storeDir, *index, false);
  ASSERT_TRUE(damage);
  EXPECT_EQ(damage->shard, 2u);
  EXPECT_NE(damage->why.find("truncated"), std::string::npos) << damage->why;
  const auto again = prepareCorpus(dir.file("c.txt"), severalShards());
  EXPECT_FALSE(again.reused);  // was "up to date: nothing to do"
  EXPECT_EQ(again.resumedShards, 2u);
  EXPECT_NE(again.rebuildReason.find("truncated"), std::string::npos) << again.rebuildReason;
  EXPECT_EQ(openTokenStore(again.storeDir)->readAll(), tokens);
  EXPECT_TRUE(prepareCorpus(dir.file("c.txt"), severalShards()).reused);
}

TEST(StoreDamage, ADeletedShardIsTokenizedAgain) {
  test::TempDir dir;
  const auto first = prepareCorpus(corpus(dir), severalShards());
  const auto tokens = openTokenStore(first.storeDir)->readAll();
  fs::remove(shard(first, 0));
  const auto again = prepareCorpus(dir.file("c.txt"), severalShards());
  EXPECT_FALSE(again.reused);
  EXPECT_NE(again.rebuildReason.find("missing"), std::string::npos) << again.rebuildReason;
  EXPECT_EQ(openTokenStore(again.storeDir)->readAll(), tokens);
}

TEST(StoreDamage, ChangedBytesOfTheSameSizeAreFoundByVerify) {
  test::TempDir dir;
  const auto first = prepareCorpus(corpus(dir), severalShards());
  const auto tokens = openTokenStore(first.storeDir)->readAll();
  {
    std::fstream f(shard(first, 1), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(kShardHeaderBytes) + 5);
    f.put('#');  // a token byte changed in place
  }
  EXPECT_TRUE(prepareCorpus(dir.file("c.txt"), severalShards()).reused);  // size and header agree
  auto verify = severalShards();
  verify.verify = true;
  const auto checked = prepareCorpus(dir.file("c.txt"), verify);
  EXPECT_FALSE(checked.reused);
  EXPECT_EQ(checked.resumedShards, 1u);
  EXPECT_NE(checked.rebuildReason.find("hash changed"), std::string::npos) << checked.rebuildReason;
  EXPECT_EQ(openTokenStore(checked.storeDir)->readAll(), tokens);
}

// Batch shards: every rank's share together is the global batch, once, in equal parts.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "distributed/batch_shard.h"

using namespace depthlab::distributed;

namespace {
// Every (micro, row) of the global batch is covered exactly once; each rank gets equal shares.
void expectPartition(int batch, int accum, int world) {
  std::set<std::pair<int, int>> seen;
  size_t perRank = 0;
  int rowsPerShard = -1;
  for (int r = 0; r < world; ++r) {
    auto shards = rankShards(batch, accum, r, world);
    if (r == 0) perRank = shards.size();
    EXPECT_EQ(shards.size(), perRank) << "rank " << r;
    for (const auto& s : shards) {
      if (rowsPerShard < 0) rowsPerShard = s.rowEnd - s.rowBegin;
      EXPECT_EQ(s.rowEnd - s.rowBegin, rowsPerShard);
      for (int row = s.rowBegin; row < s.rowEnd; ++row) {
        EXPECT_TRUE(seen.insert({s.micro, row}).second) << "row covered twice";
      }
    }
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(batch * accum));
}
}  // namespace

TEST(BatchShard, SplitsWholeMicroBatchesOrRowsEvenly) {
  expectPartition(8, 4, 2);   // whole micro-batches: 0,2 and 1,3
  expectPartition(8, 1, 2);   // rows 0-3 and 4-7 of the one micro-batch
  expectPartition(6, 3, 3);
  expectPartition(12, 5, 4);  // rows
  expectPartition(5, 7, 1);
  auto r1 = rankShards(8, 4, 1, 2);
  ASSERT_EQ(r1.size(), 2u);
  EXPECT_EQ(r1[0].micro, 1);
  EXPECT_EQ(r1[1].micro, 3);
  auto rows = rankShards(8, 3, 1, 2);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].rowBegin, 4);
  EXPECT_EQ(rows[0].rowEnd, 8);
}

TEST(BatchShard, RefusesAnUnevenSplitSayingHowToFixIt) {
  EXPECT_EQ(shardProblem(8, 3, 2), "");
  const auto why = shardProblem(5, 3, 2);
  EXPECT_NE(why.find("15 sequences"), std::string::npos) << why;
  EXPECT_NE(why.find("multiple of 2"), std::string::npos) << why;
  EXPECT_THROW(rankShards(5, 3, 0, 2), std::runtime_error);
}

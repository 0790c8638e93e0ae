// bench/update_gemms: the list of an update's linear products is the model's (every block's
// packed q/k/v, o, packed gate/up, down, and the LM head, with their counts), and timing it
// gives a time.
#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include "bench/update_gemms.h"
#include "experiment/presets.h"

using namespace depthlab;

TEST(UpdateGemms, ListEveryLinearLayerOfAnUpdateOnceWithItsCount) {
  auto c = *experiment::presetConfig("tiny");
  c.model.nLayers = 3;
  c.model.dModel = 64;
  c.model.nHeads = 4;
  c.model.nKvHeads = 2;  // grouped-query: q/k/v is (4 + 2 x 2) x 16 wide
  c.model.dFF = 172;
  c.model.vocabSize = 256;
  c.optim.batchSize = 2;
  c.model.seqLen = 8;
  const auto shapes = bench::updateGemmShapes(c);
  ASSERT_EQ(shapes.size(), 5u);
  int64_t products = 0, multiplyAdds = 0;
  for (const auto& s : shapes) {
    EXPECT_EQ(s.m, 16);  // batch x seq tokens
    products += s.count;
    multiplyAdds += s.count * s.m * s.k * s.n;
  }
  EXPECT_EQ(products, 4 * 3 + 1);
  EXPECT_EQ(shapes[0].n, (4 + 2 * 2) * 16);
  const int64_t perBlock = 64 * 128 + 64 * 64 + 64 * 2 * 172 + 172 * 64;  // weights per block
  EXPECT_EQ(multiplyAdds, 16 * (3 * perBlock + 64 * 256));
  EXPECT_EQ(bench::gemmShapesJson({{16, 64, 128, 3}, {16, 64, 256, 1}}),
            "[[16,64,128,3],[16,64,256,1]]");
}

TEST(UpdateGemms, SameShapesAreMergedWhateverTheirRole) {
  auto c = *experiment::presetConfig("tiny");
  c.model.nLayers = 2;
  c.model.dModel = 32;
  c.model.nHeads = 2;
  c.model.nKvHeads = 0;
  c.model.dFF = 48;  // gate/up is 96 wide, as q/k/v: one shape, counted for both
  c.model.vocabSize = 100;
  const auto shapes = bench::updateGemmShapes(c);
  ASSERT_EQ(shapes.size(), 4u);
  EXPECT_EQ(shapes[0].n, 96);
  EXPECT_EQ(shapes[0].count, 4);
}

TEST(UpdateGemms, TimesTheListOnThisBuildsBlas) {
  const double ms = bench::timeUpdateGemmsMs({{64, 32, 48, 2}, {64, 48, 32, 1}}, 1, 3);
  EXPECT_GT(ms, 0.0);
  EXPECT_LT(ms, 10000.0);
  EXPECT_FALSE(bench::thisBuildBlas().empty());
}

// Timed as the trainer's row split runs them: every worker multiplies its rows, side by side;
// a shape with fewer rows than workers leaves the extra workers idle, and the caller's intra-op
// thread count is as it was.
TEST(UpdateGemms, TimesTheRowSplitWithFewerRowsThanWorkers) {
  const int before = at::get_num_threads();
  const double ms = bench::timeUpdateGemmsMs({{64, 32, 48, 2}, {1, 48, 32, 1}}, 3, 3,
                                             bench::GemmThreading::RowSplit);
  EXPECT_GT(ms, 0.0);
  EXPECT_LT(ms, 10000.0);
  EXPECT_EQ(at::get_num_threads(), before);
  EXPECT_GT(bench::timeUpdateGemmsMs({{64, 32, 48, 1}}, 2, 3, bench::GemmThreading::PerOp), 0.0);
  EXPECT_EQ(at::get_num_threads(), before);
}

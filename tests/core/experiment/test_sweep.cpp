// Sweep expansion into paired groups.
#include <gtest/gtest.h>

#include "experiment/presets.h"
#include "experiment/sweep.h"

using namespace depthlab::experiment;

TEST(Sweep, DepthGridOfPairedGroups) {
  auto base = *presetConfig("cpu-demo");
  base.name = "cod";
  SweepSpec s;
  s.depths = {12, 24, 48};
  auto grid = expandSweep(base, s);
  ASSERT_EQ(grid.size(), 3u);
  EXPECT_EQ(grid[0].name, "cod-L12");
  EXPECT_EQ(grid[2].model.nLayers, 48);
  for (const auto& c : grid) EXPECT_EQ(c.schemes, (std::vector<std::string>{"pre_ln", "lns"}));
}

TEST(Sweep, FullGridAndSeeds) {
  auto base = *presetConfig("tiny");
  SweepSpec s;
  s.depths = {2, 4};
  s.widths = {32, 64};
  s.lrs = {1e-3, 3e-3};
  s.seeds = 2;
  auto grid = expandSweep(base, s);
  EXPECT_EQ(grid.size(), 16u);
  EXPECT_EQ(grid.back().name, "tiny-L4-d64-lr0.003-s2");
  EXPECT_EQ(grid.back().model.dFF, 172);
  EXPECT_EQ(grid.back().run.seed, 2);
}

TEST(Sweep, BadValuesNameTheField) {
  EXPECT_EQ(parseIntList(" 12, 24 ,48", "sweep.depth"), (std::vector<int>{12, 24, 48}));
  EXPECT_EQ(parseDoubleList("1e-3,0.01", "sweep.lr"), (std::vector<double>{1e-3, 0.01}));
  try {
    parseIntList("12, deep", "sweep.depth");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("sweep.depth"), std::string::npos);
  }
  auto base = *presetConfig("tiny");
  SweepSpec s;
  s.widths = {30};  // 30 % 2 heads == 0, but head dim 15 is odd
  EXPECT_THROW(expandSweep(base, s), ConfigError);
}

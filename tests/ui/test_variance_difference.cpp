// Compare's difference map in numbers (compare/variance_difference.h): B minus A at the steps
// both runs span, each column the nearest row of each run, by relative depth when the depths
// differ, one column of the latest rows for a snapshot, nothing when no step is shared.
#include <gtest/gtest.h>

#include "compare/variance_difference.h"

using namespace depthlab;

namespace {

// (steps x layers) values v(step, layer) = scale * (step + 1) * (layer + 1).
store::LayerSeries series(std::vector<int64_t> steps, int layers, double scale) {
  store::LayerSeries s;
  s.nLayers = layers;
  s.steps = steps;
  for (int64_t step : steps) {
    for (int l = 0; l < layers; ++l) s.values.push_back(static_cast<float>(scale * (step + 1) * (l + 1)));
  }
  return s;
}

}  // namespace

TEST(VarianceDifference, ColumnsSpanTheSharedStepsAndSubtractANearestRowFromBs) {
  const auto a = series({0, 10, 20, 30}, 2, 1.0);
  const auto b = series({10, 20, 30, 40, 50}, 2, 2.0);
  const auto d = ui::compare::varianceDifference(a, b, false, false, 400);
  ASSERT_TRUE(d.shareSteps);
  EXPECT_EQ(d.firstStep, 10);
  EXPECT_EQ(d.lastStep, 30);
  EXPECT_EQ(d.columns, 3);  // A and B each have 3 rows in [10, 30]
  EXPECT_EQ(d.rows, 2);
  ASSERT_EQ(d.cells.size(), 6u);
  // Column 1 is step 20: B 2 * 21 * (l + 1) minus A 21 * (l + 1).
  EXPECT_DOUBLE_EQ(d.cells[1 * 2 + 0], 21.0);
  EXPECT_DOUBLE_EQ(d.cells[1 * 2 + 1], 42.0);
  // Capped columns pick rows, not more columns than asked.
  EXPECT_EQ(ui::compare::varianceDifference(a, b, false, false, 2).columns, 2);
}

TEST(VarianceDifference, RunsOfDifferentDepthMeetOnRelativeDepthAndSnapshotsTakeTheLatestRow) {
  const auto a = series({0, 5}, 2, 1.0);
  const auto b = series({0, 5, 9}, 4, 1.0);
  const auto rel = ui::compare::varianceDifference(a, b, true, false, 400);
  EXPECT_EQ(rel.rows, 4);
  const auto snap = ui::compare::varianceDifference(a, b, true, true, 400);
  EXPECT_EQ(snap.columns, 1);
  ASSERT_EQ(snap.cells.size(), 4u);
  // B's last row is step 9 (10 x (l + 1)); A's, step 5 resampled: its last bin is 6 x 2.
  EXPECT_NEAR(snap.cells[3], 40.0 - 12.0, 1e-9);
}

TEST(VarianceDifference, RunsThatShareNoStepsGiveNoColumns) {
  const auto d = ui::compare::varianceDifference(series({0, 1}, 2, 1), series({5, 6}, 2, 1), false, false, 400);
  EXPECT_FALSE(d.shareSteps);
  EXPECT_TRUE(d.cells.empty());
}

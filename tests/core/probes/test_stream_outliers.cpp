// Stream outliers on hand-made streams: the largest |x| and its ratio to the median, the first
// position's norm over the others', RankMe of a rank-one stream (1) and of one whose singular
// values are equal (C); pads are left out of all of them.
#include <gtest/gtest.h>

#include <cmath>

#include "probes/stream_outliers.h"

using namespace depthlab;

TEST(StreamOutliers, HandMadeStreams) {
  model::ForwardTrace trace;
  // (B = 1, T = 4, C = 2). Block 1's output: one massive element; block 2's: rank one.
  trace.blockInputs.push_back(torch::zeros({1, 4, 2}));
  trace.blockInputs.push_back(
      torch::tensor({{{100.0f, 1.0f}, {1.0f, 2.0f}, {2.0f, 1.0f}, {1.0f, 1.0f}}}));
  trace.blockInputs.push_back(
      torch::tensor({{{3.0f, 0.0f}, {1.0f, 0.0f}, {1.0f, 0.0f}, {1.0f, 0.0f}}}));
  const auto r = probes::streamOutliers(trace, {});
  ASSERT_EQ(r.maxAbs.size(), 2u);
  EXPECT_FLOAT_EQ(r.maxAbs[0], 100.0f);
  // |x| sorted: 1 1 1 1 1 2 2 100: the median (lower middle, as torch's) is 1.
  EXPECT_FLOAT_EQ(r.maxToMedian[0], 100.0f);
  const double first = std::hypot(100.0, 1.0);
  const double others = (std::hypot(1.0, 2.0) + std::hypot(2.0, 1.0) + std::hypot(1.0, 1.0)) / 3;
  EXPECT_NEAR(r.firstTokenRatio[0], first / others, 1e-5);
  EXPECT_NEAR(r.firstTokenRatio[1], 3.0, 1e-6);
  EXPECT_NEAR(r.rankMe[1], 1.0, 1e-4);  // one direction
  // Equal singular values: an orthogonal (4, 2) stream -> RankMe = 2.
  model::ForwardTrace even;
  even.blockInputs.push_back(torch::zeros({1, 4, 2}));
  even.blockInputs.push_back(
      torch::tensor({{{1.0f, 0.0f}, {0.0f, 1.0f}, {-1.0f, 0.0f}, {0.0f, -1.0f}}}));
  EXPECT_NEAR(probes::streamOutliers(even, {}).rankMe[0], 2.0, 1e-5);
  // A pad at position 3 holding a huge value: left out everywhere.
  auto padded = trace;
  padded.blockInputs[1] = trace.blockInputs[1].clone();
  padded.blockInputs[1].index_put_({0, 3}, torch::tensor({1e6f, 1e6f}));
  const auto real = torch::tensor({{true, true, true, false}});
  const auto p = probes::streamOutliers(padded, real);
  EXPECT_FLOAT_EQ(p.maxAbs[0], 100.0f);
  EXPECT_NEAR(p.firstTokenRatio[0], first / ((std::hypot(1.0, 2.0) + std::hypot(2.0, 1.0)) / 2),
              1e-5);
}

// kernels::causalSoftmaxForward / causalSoftmaxBackward on raw blocks against the formulas
// computed in double: row lengths 1..cols (whole vectors and remainders), blocks that start
// past row 0, `cols` not a multiple of the vector width, padding past `cols` left untouched, and
// NaN / inf written in the masked columns (the loops read whole vectors past the causal
// boundary; those values must not reach a result).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/attention_kernels.h"

using namespace depthlab;

namespace {

struct Block {
  int64_t rowBegin, rows, cols, ld;
};

template <typename T>
void checkBlock(const Block& b, double tolerance) {
  SCOPED_TRACE("rowBegin " + std::to_string(b.rowBegin) + ", rows " + std::to_string(b.rows) +
               ", cols " + std::to_string(b.cols) + ", ld " + std::to_string(b.ld));
  std::mt19937 rng(static_cast<unsigned>(b.rowBegin * 131 + b.cols));
  std::normal_distribution<double> normal(0.0, 3.0);
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  const T sentinel = T(-12345);  // in the padding past `cols`: must stay
  std::vector<T> s(b.rows * b.ld), dp(b.rows * b.ld);
  for (int64_t r = 0; r < b.rows; ++r) {
    const int64_t valid = b.rowBegin + r + 1;
    for (int64_t j = 0; j < b.ld; ++j) {
      const bool masked = j >= valid && j < b.cols;
      s[r * b.ld + j] = j >= b.cols ? sentinel : masked ? (j % 2 ? nan : inf) : T(normal(rng));
      dp[r * b.ld + j] = j >= b.cols ? sentinel : masked ? (j % 2 ? inf : nan) : T(normal(rng));
    }
  }
  const std::vector<T> scores = s, upstream = dp;
  const T scale = T(0.37);
  kernels::causalSoftmaxForward(s.data(), b.rowBegin, b.rows, b.cols, b.ld, scale);
  kernels::causalSoftmaxBackward(s.data(), dp.data(), b.rowBegin, b.rows, b.cols, b.ld, scale);

  for (int64_t r = 0; r < b.rows; ++r) {
    const int64_t valid = b.rowBegin + r + 1;
    const T* row = scores.data() + r * b.ld;
    double m = -std::numeric_limits<double>::infinity(), sum = 0;
    for (int64_t j = 0; j < valid; ++j) m = std::max(m, double(row[j]) * scale);
    std::vector<double> p(valid);
    for (int64_t j = 0; j < valid; ++j) sum += p[j] = std::exp(double(row[j]) * scale - m);
    double dot = 0;
    for (int64_t j = 0; j < valid; ++j) {
      p[j] /= sum;
      dot += p[j] * double(upstream[r * b.ld + j]);
    }
    for (int64_t j = 0; j < b.ld; ++j) {
      const T got = s[r * b.ld + j], grad = dp[r * b.ld + j];
      if (j >= b.cols) {
        ASSERT_EQ(got, sentinel) << "row " << r << ", padding column " << j;
        ASSERT_EQ(grad, sentinel) << "row " << r << ", padding column " << j;
      } else if (j >= valid) {
        ASSERT_EQ(got, T(0)) << "row " << r << ", masked column " << j;
        ASSERT_EQ(grad, T(0)) << "row " << r << ", masked column " << j;
      } else {
        const double ds = scale * p[j] * (double(upstream[r * b.ld + j]) - dot);
        ASSERT_NEAR(got, p[j], tolerance) << "row " << r << ", column " << j;
        ASSERT_NEAR(grad, ds, tolerance * (1 + std::abs(dot))) << "row " << r << ", column " << j;
      }
    }
  }
}

template <typename T>
void checkAll(double tolerance) {
  for (const Block b : {Block{0, 1, 1, 1}, Block{0, 64, 64, 64}, Block{0, 64, 64, 80},
                        Block{64, 1, 65, 65}, Block{64, 20, 84, 90}, Block{0, 37, 37, 41},
                        Block{5, 12, 17, 17}, Block{128, 64, 192, 256}}) {
    checkBlock<T>(b, tolerance);
  }
}

}  // namespace

TEST(AttentionKernels, CausalSoftmaxRowsMatchTheFormulaWhateverTheMaskedColumnsHold) {
  checkAll<float>(2e-6);
  checkAll<double>(1e-13);
}

// See attention_kernels.h. Sums accumulate in the element type (float: 16 lanes combined at the
// end of each row); the float loops are also compiled for AVX-512 and AVX2 (picked at load time).
#include "kernels/attention_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

// The 64-byte vectors below never cross a call (everything using them is inlined): GCC's note
// that their ABI depends on AVX-512 does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

#include "kernels/fast_exp.h"

namespace depthlab::kernels {

namespace {

// float rows go through 16-lane GCC vectors (one AVX-512 register, two AVX2 ones, four SSE
// ones in the clones below) up to the row's `valid` columns rounded up to whole vectors,
// within the `cols` written; the lanes past `valid` are selected out. Loops over `valid`
// itself left a scalar remainder, with its exp, that on short rows (head dim 16, T = 64: rows
// of 1..64 columns) cost more than the vector part. double rows (tests, analysis) stay plain.
typedef float F16 __attribute__((vector_size(64)));
typedef int32_t I16 __attribute__((vector_size(64)));
constexpr int64_t kLanes = 16;
constexpr I16 kLaneIndex = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

__attribute__((always_inline)) inline F16 load16(const float* p) {
  F16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

__attribute__((always_inline)) inline void store16(float* p, F16 v) { std::memcpy(p, &v, sizeof v); }

// A row's columns in vector terms: `padded` = its `valid` columns rounded up to whole vectors
// within `cols`; `whole` = the part of that in whole vectors (== padded unless cols cuts one).
struct RowExtent {
  int64_t padded, whole;
};

__attribute__((always_inline)) inline RowExtent rowExtent(int64_t valid, int64_t cols) {
  const int64_t padded = std::min(cols, (valid + kLanes - 1) / kLanes * kLanes);
  return {padded, padded / kLanes * kLanes};
}

// Lanes l with b + l < valid.
__attribute__((always_inline)) inline I16 laneBelow(int64_t b, int64_t valid) {
  return kLaneIndex < static_cast<int32_t>(std::min<int64_t>(valid - b, kLanes));
}

typedef float F8 __attribute__((vector_size(32)));
typedef float F4 __attribute__((vector_size(16)));

// Halving reductions over the 16 lanes.
__attribute__((always_inline)) inline float laneMax(F16 v) {
  const F8 lo8 = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
  const F8 hi8 = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  const F8 a = hi8 > lo8 ? hi8 : lo8;
  const F4 lo4 = __builtin_shufflevector(a, a, 0, 1, 2, 3);
  const F4 hi4 = __builtin_shufflevector(a, a, 4, 5, 6, 7);
  const F4 b = hi4 > lo4 ? hi4 : lo4;
  return std::max(std::max(b[0], b[1]), std::max(b[2], b[3]));
}

__attribute__((always_inline)) inline float laneSum(F16 v) {
  const F8 a = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
               __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  const F4 b = __builtin_shufflevector(a, a, 0, 1, 2, 3) + __builtin_shufflevector(a, a, 4, 5, 6, 7);
  return (b[0] + b[2]) + (b[1] + b[3]);
}

__attribute__((always_inline)) inline void softmaxRowsFloat(float* s, int64_t rowBegin,
                                                            int64_t rows, int64_t cols,
                                                            int64_t ld, float scale) {
  constexpr float lowest = std::numeric_limits<float>::lowest();
  for (int64_t r = 0; r < rows; ++r) {
    float* row = s + r * ld;
    const int64_t valid = rowBegin + r + 1;  // columns 0..i
    const auto [padded, whole] = rowExtent(valid, cols);
    F16 mv = F16{} + lowest;
    for (int64_t b = 0; b < whole; b += kLanes) {
      const F16 x = laneBelow(b, valid) ? load16(row + b) : F16{} + lowest;
      mv = x > mv ? x : mv;
    }
    float m = laneMax(mv);
    for (int64_t j = whole; j < valid; ++j) m = row[j] > m ? row[j] : m;
    const float ms = m * scale;
    F16 sv = F16{};
    for (int64_t b = 0; b < whole; b += kLanes) {
      const F16 e = expFloatLanes<F16, I16>(load16(row + b) * scale - ms);
      const F16 kept = laneBelow(b, valid) ? e : F16{};
      store16(row + b, kept);
      sv += kept;
    }
    float sum = laneSum(sv);
    for (int64_t j = whole; j < padded; ++j) {
      const float e = j < valid ? expFloat(row[j] * scale - ms) : 0.0f;
      row[j] = e;
      sum += e;
    }
    const float inv = 1.0f / sum;
    for (int64_t b = 0; b < whole; b += kLanes) store16(row + b, load16(row + b) * inv);
    for (int64_t j = whole; j < padded; ++j) row[j] *= inv;
    std::fill(row + padded, row + cols, 0.0f);
  }
}

__attribute__((always_inline)) inline void softmaxBackwardRowsFloat(const float* p, float* dp,
                                                                    int64_t rowBegin, int64_t rows,
                                                                    int64_t cols, int64_t ld,
                                                                    float scale) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* pr = p + r * ld;
    float* dr = dp + r * ld;
    const int64_t valid = rowBegin + r + 1;
    const auto [padded, whole] = rowExtent(valid, cols);
    F16 dv = F16{};
    for (int64_t b = 0; b < whole; b += kLanes) {
      dv += laneBelow(b, valid) ? load16(pr + b) * load16(dr + b) : F16{};
    }
    float dot = laneSum(dv);
    for (int64_t j = whole; j < valid; ++j) dot += pr[j] * dr[j];
    for (int64_t b = 0; b < whole; b += kLanes) {
      const F16 g = scale * (load16(pr + b) * (load16(dr + b) - dot));
      store16(dr + b, laneBelow(b, valid) ? g : F16{});
    }
    for (int64_t j = whole; j < padded; ++j) dr[j] = j < valid ? scale * (pr[j] * (dr[j] - dot)) : 0.0f;
    std::fill(dr + padded, dr + cols, 0.0f);
  }
}

template <typename T>
void softmaxRowsPlain(T* s, int64_t rowBegin, int64_t rows, int64_t cols, int64_t ld, T scale) {
  for (int64_t r = 0; r < rows; ++r) {
    T* row = s + r * ld;
    const int64_t valid = rowBegin + r + 1;
    T m = std::numeric_limits<T>::lowest();
    for (int64_t j = 0; j < valid; ++j) m = std::max(m, row[j]);
    T sum = 0;
    for (int64_t j = 0; j < valid; ++j) sum += row[j] = std::exp(row[j] * scale - m * scale);
    for (int64_t j = 0; j < valid; ++j) row[j] /= sum;
    std::fill(row + valid, row + cols, T(0));
  }
}

template <typename T>
void softmaxBackwardRowsPlain(const T* p, T* dp, int64_t rowBegin, int64_t rows, int64_t cols,
                              int64_t ld, T scale) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* pr = p + r * ld;
    T* dr = dp + r * ld;
    const int64_t valid = rowBegin + r + 1;
    T dot = 0;
    for (int64_t j = 0; j < valid; ++j) dot += pr[j] * dr[j];
    for (int64_t j = 0; j < valid; ++j) dr[j] = scale * (pr[j] * (dr[j] - dot));
    std::fill(dr + valid, dr + cols, T(0));
  }
}

}  // namespace

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
void causalSoftmaxForward(float* s, int64_t rowBegin, int64_t rows, int64_t cols, int64_t ld,
                          float scale) {
  softmaxRowsFloat(s, rowBegin, rows, cols, ld, scale);
}

void causalSoftmaxForward(double* s, int64_t rowBegin, int64_t rows, int64_t cols, int64_t ld,
                          double scale) {
  softmaxRowsPlain(s, rowBegin, rows, cols, ld, scale);
}

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
void causalSoftmaxBackward(const float* p, float* dp, int64_t rowBegin, int64_t rows,
                           int64_t cols, int64_t ld, float scale) {
  softmaxBackwardRowsFloat(p, dp, rowBegin, rows, cols, ld, scale);
}

void causalSoftmaxBackward(const double* p, double* dp, int64_t rowBegin, int64_t rows,
                           int64_t cols, int64_t ld, double scale) {
  softmaxBackwardRowsPlain(p, dp, rowBegin, rows, cols, ld, scale);
}

}  // namespace depthlab::kernels

// See attention_kernels.h. Sums accumulate in the element type (lanes combined at the end);
// the float loops are also compiled for AVX-512 and AVX2 (picked at load time).
#include "kernels/attention_kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/fast_exp.h"

namespace depthlab::kernels {

namespace {

template <typename T, typename Exp>
__attribute__((always_inline)) inline void softmaxRows(T* s, int64_t rowBegin, int64_t rows, int64_t cols, int64_t ld, T scale,
                        Exp expOf) {
  for (int64_t r = 0; r < rows; ++r) {
    T* row = s + r * ld;
    const int64_t valid = rowBegin + r + 1;  // columns 0..i
    T m = std::numeric_limits<T>::lowest();
#pragma omp simd reduction(max : m)
    for (int64_t j = 0; j < valid; ++j) m = row[j] > m ? row[j] : m;
    const T ms = m * scale;
    T sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < valid; ++j) {
      const T e = expOf(row[j] * scale - ms);
      row[j] = e;
      sum += e;
    }
    const T inv = T(1) / sum;
#pragma omp simd
    for (int64_t j = 0; j < valid; ++j) row[j] *= inv;
    std::fill(row + valid, row + cols, T(0));
  }
}

template <typename T>
__attribute__((always_inline)) inline void softmaxBackwardRows(const T* p, T* dp, int64_t rowBegin, int64_t rows, int64_t cols,
                                int64_t ld, T scale) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* pr = p + r * ld;
    T* dr = dp + r * ld;
    const int64_t valid = rowBegin + r + 1;
    T dot = 0;
#pragma omp simd reduction(+ : dot)
    for (int64_t j = 0; j < valid; ++j) dot += pr[j] * dr[j];
#pragma omp simd
    for (int64_t j = 0; j < valid; ++j) dr[j] = scale * (pr[j] * (dr[j] - dot));
    std::fill(dr + valid, dr + cols, T(0));
  }
}

}  // namespace

// finite-math-only lets the row maximum vectorise (GCC keeps a scalar max otherwise, for NaN
// and -0 ordering); scores are finite in any run worth probing, and a NaN still reaches the sum.
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"),
               optimize("finite-math-only", "no-signed-zeros")))
void causalSoftmaxForward(float* s, int64_t rowBegin, int64_t rows, int64_t cols, int64_t ld,
                          float scale) {
  softmaxRows(s, rowBegin, rows, cols, ld, scale,
              [](float x) __attribute__((always_inline)) { return expFloat(x); });
}

void causalSoftmaxForward(double* s, int64_t rowBegin, int64_t rows, int64_t cols, int64_t ld,
                          double scale) {
  softmaxRows(s, rowBegin, rows, cols, ld, scale, [](double x) { return std::exp(x); });
}

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
void causalSoftmaxBackward(const float* p, float* dp, int64_t rowBegin, int64_t rows,
                           int64_t cols, int64_t ld, float scale) {
  softmaxBackwardRows(p, dp, rowBegin, rows, cols, ld, scale);
}

void causalSoftmaxBackward(const double* p, double* dp, int64_t rowBegin, int64_t rows,
                           int64_t cols, int64_t ld, double scale) {
  softmaxBackwardRows(p, dp, rowBegin, rows, cols, ld, scale);
}

}  // namespace depthlab::kernels

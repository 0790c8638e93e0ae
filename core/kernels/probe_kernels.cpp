// See probe_kernels.h.
#include "kernels/probe_kernels.h"

#include <algorithm>
#include <cmath>

namespace depthlab::kernels {

namespace {

double dotOf(const float* a, const float* b, int64_t C) {
  double s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t j = 0; j < C; ++j) s += static_cast<double>(a[j]) * static_cast<double>(b[j]);
  return s;
}

}  // namespace

double elementVariance(const float* x, int64_t n) {
  if (n <= 0) return 0;
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]);
  const double mean = sum / static_cast<double>(n);
  double sq = 0;
#pragma omp simd reduction(+ : sq)
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - mean;
    sq += d * d;
  }
  return sq / static_cast<double>(n);
}

double angularDistanceOf(double dot, double normA, double normB) {
  if (normA == 0 && normB == 0) return 0.0;
  if (normA == 0 || normB == 0) return 0.5;
  const double c = std::clamp(dot / (normA * normB), -1.0, 1.0);
  return std::acos(c) / M_PI;
}

void tokenNorms(const float* x, int64_t C, const TokenRows& rows, double* out) {
  for (int64_t t = 0; t < rows.count; ++t) {
    const float* r = x + (rows.first + t * rows.step) * C;
    out[t] = std::sqrt(dotOf(r, r, C));
  }
}

void adjacentStats(const float* const* x, int64_t N, int64_t C, const TokenRows& rows,
                   const double* norms, int64_t begin, int64_t end, AdjacentStats* out) {
  const int64_t n = N * C;
  for (int64_t l = begin; l < end; ++l) {
    const float* prev = x[l];
    const float* cur = x[l + 1];
    AdjacentStats s;
    s.variance = elementVariance(cur, n);
    double diff2 = 0, norm2 = 0;
#pragma omp simd reduction(+ : diff2, norm2)
    for (int64_t i = 0; i < n; ++i) {
      const double c = static_cast<double>(cur[i]);
      const double d = c - static_cast<double>(prev[i]);
      diff2 += d * d;
      norm2 += c * c;
    }
    s.effectiveness = norm2 > 0 ? diff2 / norm2 : 0.0;
    double angular = 0, cosSum = 0;
    for (int64_t t = 0; t < rows.count; ++t) {
      const int64_t row = rows.first + t * rows.step;
      const double d = angularDistanceOf(dotOf(prev + row * C, cur + row * C, C),
                                         norms[l * rows.count + t],
                                         norms[(l + 1) * rows.count + t]);
      angular += d;
      cosSum += std::cos(d * M_PI);
    }
    const double count = static_cast<double>(std::max<int64_t>(rows.count, 1));
    s.angular = angular / count;
    s.blockInfluence = 1.0 - cosSum / count;
    out[l] = s;
  }
}

void angularMatrixRows(const float* const* x, int L, int64_t C, const TokenRows& rows,
                       const double* norms, int64_t begin, int64_t end, float* out) {
  const double count = static_cast<double>(std::max<int64_t>(rows.count, 1));
  for (int64_t a = begin; a < end; ++a) {
    for (int n = 1; a + n <= L; ++n) {
      const int64_t b = a + n;
      double sum = 0;
      for (int64_t t = 0; t < rows.count; ++t) {
        const int64_t row = rows.first + t * rows.step;
        sum += angularDistanceOf(dotOf(x[a] + row * C, x[b] + row * C, C),
                                 norms[a * rows.count + t], norms[b * rows.count + t]);
      }
      out[a * L + (n - 1)] = static_cast<float>(sum / count);
    }
  }
}

}  // namespace depthlab::kernels

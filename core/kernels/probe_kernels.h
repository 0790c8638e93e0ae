// Plain CPU loops behind the forward depth probes: one pass per residual stream (double
// accumulators on float32 data) instead of a dozen float64 tensor operations over all
// L+1 streams. No torch, no threads: probes/depth_probes.cpp splits layers across ATen's
// intra-op threads and checks shapes; tests compare against probes/probe_math.h.
// Legend: L blocks, streams x[0..L] (x[l] enters block l, x[L] is the final residual), each
// (N, C) row-major float32; angular measures use token rows firstRow, firstRow+rowStep, ...
#pragma once

#include <cstdint>

namespace depthlab::kernels {

/// Token rows the angular measures look at: all rows, or one per sequence (the last token).
struct TokenRows {
  int64_t first = 0, step = 1, count = 0;
};

/// Population variance over all n elements of x (mean first, then squared deviations).
double elementVariance(const float* x, int64_t n);

/// What the forward probes report for block l, comparing stream l+1 with stream l.
struct AdjacentStats {
  double variance = 0;        // population variance of x[l+1]
  double effectiveness = 0;   // ||x[l+1] - x[l]||^2 / ||x[l+1]||^2, 0 when x[l+1] is zero
  double angular = 0;         // mean over token rows of arccos(cos(x[l]_t, x[l+1]_t)) / pi
  double blockInfluence = 0;  // 1 - mean over token rows of cos(pi * that distance)
};

/// Stats for blocks [begin, end). x: L+1 stream pointers, each N*C floats; norms: (L+1,
/// rows.count) token norms from tokenNorms().
void adjacentStats(const float* const* x, int64_t N, int64_t C, const TokenRows& rows,
                   const double* norms, int64_t begin, int64_t end, AdjacentStats* out);

/// Mean angular distance between streams a and a+n, for a in [begin, end) and every n >= 1
/// with a + n <= L, written to out[a * L + (n - 1)]. norms: (L+1, rows.count) token norms
/// from tokenNorms().
void angularMatrixRows(const float* const* x, int L, int64_t C, const TokenRows& rows,
                       const double* norms, int64_t begin, int64_t end, float* out);

/// L2 norm of each selected token row of one stream: out (rows.count).
void tokenNorms(const float* x, int64_t C, const TokenRows& rows, double* out);

/// The distance rule shared by every angular measure: arccos of the clamped cosine over pi;
/// a zero vector has no direction (both zero: 0, one zero: 0.5, the official code's rule).
double angularDistanceOf(double dot, double normA, double normB);

}  // namespace depthlab::kernels

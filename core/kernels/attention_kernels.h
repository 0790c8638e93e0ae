// Row loops of causal attention's softmax for the CPU path (model/causal_attention.cpp): the
// scale, the causal mask and the softmax in one pass over a block of score rows, and the
// softmax's backward with the scale folded in, in place. Raw pointers only: no torch, no
// threads. A block holds rows [rowBegin, rowBegin + rows) of one (batch, head)'s T x T scores,
// `ld` elements apart, with `cols` columns written (cols >= rowBegin + rows); row i keeps
// columns [0, i] and gets zeros in (i, cols).
#pragma once

#include <cstdint>

namespace depthlab::kernels {

/// p = softmax over j <= i of scale * s[i, j], in place (s -> p).
void causalSoftmaxForward(float* s, int64_t rowBegin, int64_t rows, int64_t cols, int64_t ld,
                          float scale);
void causalSoftmaxForward(double* s, int64_t rowBegin, int64_t rows, int64_t cols, int64_t ld,
                          double scale);

/// The gradient of the scores from dp (in place, dp -> ds) and the saved p:
/// ds[i, j] = scale * p[i, j] * (dp[i, j] - sum_k p[i, k] dp[i, k]) for j <= i, 0 beyond.
void causalSoftmaxBackward(const float* p, float* dp, int64_t rowBegin, int64_t rows,
                           int64_t cols, int64_t ld, float scale);
void causalSoftmaxBackward(const double* p, double* dp, int64_t rowBegin, int64_t rows,
                           int64_t cols, int64_t ld, double scale);

}  // namespace depthlab::kernels

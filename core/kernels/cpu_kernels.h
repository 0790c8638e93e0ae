// Plain CPU loops for the decoder's memory-bound steps, written so one pass over memory does
// what the composite ATen expression does in several: RMSNorm forward/backward (and the row add
// fused in before it), RoPE with the head split fused in, SwiGLU over one gate/up product, and
// the Adam update. Raw pointers and row ranges only: no torch, no threads (the callers in
// model/fused_ops.cpp and train/fused_adam.cpp split rows across ATen's intra-op threads and own
// the autograd wiring). Compiled with -O3 -fno-math-errno so the loops vectorise. Templated on
// float and double (double serves gradient checks).
// Legend: N rows, C row width, B batch, T time, H heads, D head dim (C = H*D).
#pragma once

#include <cstdint>

namespace depthlab::kernels {

/// One switch for every fused path (model ops and optimizer step); on by default. Off sends
/// everything through the composite ATen / torch::optim code (tests, `bench train --unfused`).
void setFusedKernelsEnabled(bool enabled);
bool fusedKernelsEnabled();

/// y[i,:] = x[i,:] * rstd[i] * w * scale with rstd[i] = 1/sqrt(mean(x[i,:]^2) + eps), for rows
/// [begin, end). Writes rstd (N) for the backward pass. x, y: (N, C) row-major.
template <typename T>
void rmsNormForward(const T* x, const T* w, T* y, T* rstd, int64_t begin, int64_t end, int64_t C,
                    double eps, double scale);

/// Gradients of rmsNormForward for rows [begin, end): dx (N, C) and this range's
/// contribution to dw, accumulated into dwPartial (C, double).
template <typename T>
void rmsNormBackward(const T* dy, const T* x, const T* w, const T* rstd, T* dx, double* dwPartial,
                     int64_t begin, int64_t end, int64_t C, double scale);

/// out[i,:] = a[i,:] + b[i,:] for rows [begin, end) of (N, C) row-major; out may be a or b.
template <typename T>
void addRows(const T* a, const T* b, T* out, int64_t begin, int64_t end, int64_t C);

/// Rotary embedding (rotate-half convention) fused with the head split: x (B, T, H*D) as a
/// linear layer writes it, row (b, t) starting xRowStride elements after the one before (H*D
/// when contiguous; wider when x is q's part of one q/k/v product), y (B, H, T, D) contiguous,
/// for the (b, t) rows [begin, end) of the flattened B*T. cos/sin: (>= T, D).
template <typename T>
void ropeSplitHeadsForward(const T* x, const T* cos, const T* sin, T* y, int64_t begin,
                           int64_t end, int64_t Tlen, int64_t H, int64_t D, int64_t xRowStride);

/// Its transpose (RoPE is a rotation): dy (B, H, T, D) -> dx (B, T, H*D), same row range; dx's
/// rows dxRowStride elements apart (H*D, or wider when dx is a part of one q/k/v gradient).
template <typename T>
void ropeSplitHeadsBackward(const T* dy, const T* cos, const T* sin, T* dx, int64_t begin,
                            int64_t end, int64_t Tlen, int64_t H, int64_t D, int64_t dxRowStride);

/// The head split alone (v of one q/k/v product): x (B, T, H*D) with rows xRowStride apart ->
/// y (B, H, T, D) contiguous, for the (b, t) rows [begin, end).
template <typename T>
void splitHeads(const T* x, T* y, int64_t begin, int64_t end, int64_t Tlen, int64_t H, int64_t D,
                int64_t xRowStride);

/// Its transpose: dy (B, H, T, D) -> dx (B, T, H*D) with rows dxRowStride apart.
template <typename T>
void mergeHeads(const T* dy, T* dx, int64_t begin, int64_t end, int64_t Tlen, int64_t H,
                int64_t D, int64_t dxRowStride);

/// SwiGLU from one gate/up product: gu (N, 2F) holds gate g in columns [0, F) and up u in
/// [F, 2F); h (N, F) = silu(g) * u = g * sigmoid(g) * u, rows [begin, end).
void swigluForward(const float* gu, float* h, int64_t begin, int64_t end, int64_t F);
void swigluForward(const double* gu, double* h, int64_t begin, int64_t end, int64_t F);

/// Its gradient in one pass, written the way the gate/up product's backward reads it:
/// dgu (N, 2F) with dg = dh * u * s * (1 + g (1 - s)) and du = dh * g * s, s = sigmoid(g).
void swigluBackward(const float* dh, const float* gu, float* dgu, int64_t begin, int64_t end,
                    int64_t F);
void swigluBackward(const double* dh, const double* gu, double* dgu, int64_t begin, int64_t end,
                    int64_t F);

/// Constants of one Adam(W) update, computed once per parameter by the caller.
/// Each is the double value torch::optim computes, rounded to float as ATen's float kernels do.
struct AdamStepConstants {
  float beta1, oneMinusBeta1;  // first-moment decay b1 and 1 - b1
  float beta2, oneMinusBeta2;  // second-moment decay b2 and 1 - b2
  float stepSize;              // lr / (1 - b1^t)
  float biasCorrection2Sqrt;   // sqrt(1 - b2^t)
  float eps;
  float weightDecay;           // Adam: g += wd * p (L2); 0 for none
  float decoupledDecay;        // AdamW: p *= 1 - lr * wd before the update; 1 for none
};

/// One Adam(W) update of elements [begin, end): exactly torch::optim::Adam's arithmetic
/// (m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; p -= stepSize * m / (sqrt(v)/sqrt(bc2) + eps)),
/// in one pass instead of eight.
void adamUpdate(float* p, const float* g, float* m, float* v, int64_t begin, int64_t end,
                const AdamStepConstants& k);

}  // namespace depthlab::kernels

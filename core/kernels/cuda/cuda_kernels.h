// Launchers of DepthLab's own CUDA kernels (core/kernels/cuda/*.cu), for the memory-bound parts
// of the training step: RMSNorm with the LNS factor folded in, RoPE fused with the head split,
// the SwiGLU product, and cross-entropy over the vocabulary straight from bf16 logits. Plain C++:
// raw device pointers, a dtype tag, the stream; no torch and no CUDA headers, so only the .cu
// files see nvcc. Built only in a configuration whose LibTorch has CUDA (DEPTHLAB_WITH_CUDA).
// Each launcher throws std::runtime_error with CUDA's message when a launch fails.
// The autograd wiring lives in model/cuda_ops.{h,cpp}.
// Legend: N rows, C width, B batch, T time, H heads, D head dim, V vocabulary, n elements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace depthlab::kernels::cuda {

enum class DType { Float32, BFloat16, Float16 };
using Stream = void*;  // cudaStream_t

/// y = scale * w * (x * rstd), rstd = 1 / sqrt(mean(x^2) + eps) per row. x, w float32; y of
/// type yType (float32, or bf16 / fp16 when the norm feeds a low-precision matmul).
/// x, y (N, C); w (C); rstd (N) float32, saved for the backward.
void rmsNormForward(const float* x, const float* w, DType yType, void* y, float* rstd, int64_t N,
                    int64_t C, float eps, float scale, Stream s);
/// The residual add fused in: sum = x + residual (float32, residual of type yType), then
/// y = rmsNorm(sum) as above. residual and sum may both be null (then it is rmsNormForward).
void addRmsNormForward(const float* x, const void* residual, float* sum, const float* w,
                       DType yType, void* y, float* rstd, int64_t N, int64_t C, float eps,
                       float scale, Stream s);
/// Rows of partial weight-gradient sums rmsNormBackward writes (the caller sums them).
int64_t rmsNormPartialRows(int64_t N, int64_t C);
/// dy (N, C) of type dyType; dx (N, C) float32; dwPartial (rmsNormPartialRows(N, C), C) float32,
/// summed over rows by the caller. All rows 16-byte aligned (fresh contiguous tensors).
void rmsNormBackward(DType dyType, const void* dy, const float* x, const float* w,
                     const float* rstd, float* dx, float* dwPartial, int64_t N, int64_t C,
                     float scale, Stream s);
/// Backward of addRmsNormForward: dx = rmsNorm'(sum) dy + dsum (float32; dsum may be null),
/// also written to dresidual (type dyType) when that is not null.
void addRmsNormBackward(DType dyType, const void* dy, const float* sum, const float* w,
                        const float* rstd, const float* dsum, float* dx, void* dresidual,
                        float* dwPartial, int64_t N, int64_t C, float scale, Stream s);
/// h = silu(g) * u, elementwise over n values (computed in float32).
void swigluForward(DType t, const void* g, const void* u, void* h, int64_t n, Stream s);
/// dg = dh * u * silu'(g), du = dh * silu(g).
void swigluBackward(DType t, const void* dh, const void* g, const void* u, void* dg, void* du,
                    int64_t n, Stream s);

/// Rotate-half RoPE per head with the head split: x (B, T, H*D) contiguous -> y (B, H, T, D)
/// contiguous; cos, sin (T, D) float32. `vectorLoads`: the 16-byte vector kernels (each thread
/// 16 bytes of pairs of one head, every row at once) where D/2 holds whole vectors and every
/// pointer and stride is 16-byte aligned; the scalar kernels otherwise.
void ropeSplitHeadsForward(DType t, const void* x, const float* cos, const float* sin, void* y,
                           int64_t B, int64_t T, int64_t H, int64_t D, bool vectorLoads, Stream s);
/// dy (B, H, T, D) with element strides dyStrides[0..2] for B, H, T (D contiguous) -> dx
/// (B, T, H*D) contiguous.
void ropeSplitHeadsBackward(DType t, const void* dy, const int64_t* dyStrides, const float* cos,
                            const float* sin, void* dx, int64_t B, int64_t T, int64_t H, int64_t D,
                            bool vectorLoads, Stream s);

/// Per-row cross-entropy from logits (N, V) of type t, targets (N) int64: loss (N) and the
/// log-sum-exp (N) for the backward, float32. A target of -100 (a pad) gives 0, any other
/// outside [0, V) NaN.
void crossEntropyForward(DType t, const void* logits, const int64_t* targets, float* loss,
                         float* lse, int64_t N, int64_t V, Stream s);
/// dlogits = (softmax - onehot) * (*gradScale) * rowScale, in the logits' type; 0 in the rows
/// of target -100. gradScale is a device pointer (the incoming gradient), so the backward
/// never reads the host.
void crossEntropyBackward(DType t, const void* logits, const int64_t* targets, const float* lse,
                          const float* gradScale, float rowScale, void* dlogits, int64_t N,
                          int64_t V, Stream s);

struct DeviceInfo {
  std::string name;
  int major = 0, minor = 0, multiprocessors = 0;
  size_t freeBytes = 0, totalBytes = 0;
};
/// Name, compute capability and memory of CUDA device `index` (cudaMemGetInfo for free bytes).
DeviceInfo deviceInfo(int index);

}  // namespace depthlab::kernels::cuda

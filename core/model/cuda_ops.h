// Autograd functions over DepthLab's CUDA kernels (kernels/cuda/cuda_kernels.h): RMSNorm with the
// LNS factor folded in, RoPE fused with the head split, the SwiGLU product, and cross-entropy from
// bf16 logits. Each has a hand-written backward (first order only). `cudaOpsApply(x)` says when
// layers.cpp and decoder.cpp use them: a build whose LibTorch has CUDA, a CUDA tensor of a
// supported type, and the switch on. Everywhere else the composite ATen expressions run, and the
// GPU tests check the two agree, forward and backward.
//
// The switch is on by default (the kernels pass the `gpu` tests on the lab's H200);
// DEPTHLAB_CUDA_KERNELS=0 turns it off, for an A/B or to rule the kernels out.
// Legend: B batch, T time, C width, H heads, D = C/H head dim, V vocabulary.
#pragma once

#include <torch/torch.h>

#include <optional>
#include <utility>

namespace depthlab::model {

/// True when this build has the CUDA kernels (its LibTorch has CUDA).
bool cudaKernelsBuilt();
void setCudaKernelsEnabled(bool enabled);
bool cudaKernelsEnabled();
/// The residual add fused into the following RMSNorm (cudaAddRmsNorm) where the kernels apply;
/// on by default, DEPTHLAB_CUDA_FUSED_RESIDUAL=0 turns it off (an A/B for the benchmark).
void setCudaResidualFusionEnabled(bool enabled);
bool cudaResidualFusionEnabled();
/// RoPE's 16-byte vector kernels where shapes and alignment allow (kernels/cuda/cuda_kernels.h);
/// off by default until a GPU has timed them, DEPTHLAB_CUDA_ROPE_VECTOR=1 turns them on. No
/// effect in a build without the CUDA kernels.
void setCudaRopeVectorLoads(bool on);
bool cudaRopeVectorLoads();

/// True when the functions below handle `x`: built, switched on (and the fused-kernel switch
/// kernels::fusedKernelsEnabled() on), x on CUDA, strided, float32 / bf16 / fp16.
bool cudaOpsApply(const torch::Tensor& x);

/// scale * weight * x / sqrt(mean(x^2, -1) + eps): (..., C) float32, weight (C) float32. The
/// result is float32, or `out` (bf16 / fp16): the cast a following matmul would make, fused.
torch::Tensor cudaRmsNorm(const torch::Tensor& x, const torch::Tensor& weight, double eps,
                          double scale, std::optional<torch::ScalarType> out = std::nullopt);
/// The residual add fused into the norm: {sum = x + residual (float32), rmsNorm(sum) * scale in
/// the residual's type}. x (..., C) float32; residual float32 / bf16 / fp16; weight (C) float32.
std::pair<torch::Tensor, torch::Tensor> cudaAddRmsNorm(const torch::Tensor& x,
                                                      const torch::Tensor& residual,
                                                      const torch::Tensor& weight, double eps,
                                                      double scale);
/// The dtype CUDA autocast casts a matmul's input to when it is on (bf16 / fp16), else nullopt.
std::optional<torch::ScalarType> cudaAutocastMatmulDtype();
/// silu(g) * u, same shape and type.
torch::Tensor cudaSwiglu(const torch::Tensor& g, const torch::Tensor& u);
/// (B, T, H*D) -> (B, H, T, D) contiguous, rotated; cos, sin (>= T, D) float32 tables.
torch::Tensor cudaRopeSplitHeads(const torch::Tensor& x, const torch::Tensor& cos,
                                 const torch::Tensor& sin, int64_t heads);
/// Mean cross-entropy () float32 of logits (N, V) against targets (N) int64.
torch::Tensor cudaCrossEntropy(const torch::Tensor& logits, const torch::Tensor& targets);

}  // namespace depthlab::model

// Autograd functions over the CPU kernels of kernels/cpu_kernels.h: RMSNorm with the LNS
// factor folded in, and RoPE fused with the head split. Each has a hand-written backward
// (first order only; nothing in the lab differentiates twice). `fusedOpsApply(x)` says when
// layers.cpp uses them: CPU tensors of float32/float64 with the switch on. Everywhere else
// (CUDA, bf16/half, autocast) the composite ATen expressions in layers.cpp run instead, and
// tests check the two agree, forward and backward.
// Legend: B batch, T time, C width, H heads, D = C/H head dim.
#pragma once

#include <torch/torch.h>

namespace depthlab::model {

/// True when the fused functions below handle `x`: CPU, float32/float64, strided, and the
/// switch kernels::fusedKernelsEnabled() on.
bool fusedOpsApply(const torch::Tensor& x);

/// scale * weight * x / sqrt(mean(x^2, -1) + eps): (..., C) -> (..., C), weight (C).
torch::Tensor fusedRmsNorm(const torch::Tensor& x, const torch::Tensor& weight, double eps,
                           double scale);
/// Rotate-half RoPE applied per head: x (B, T, H*D) -> (B, H, T, D) contiguous.
/// cos, sin: (>= T, D) tables.
torch::Tensor fusedRopeSplitHeads(const torch::Tensor& x, const torch::Tensor& cos,
                                  const torch::Tensor& sin, int64_t heads);

}  // namespace depthlab::model

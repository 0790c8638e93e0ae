// Autograd function over the CPU kernels of kernels/cpu_kernels.h: RMSNorm with the LNS
// factor folded in (RoPE with the head split and SwiGLU: model/packed_ops.h; causal attention:
// model/causal_attention.h). It has a hand-written backward (first order only; nothing in the
// lab differentiates twice). `fusedOpsApply(x)` says when layers.cpp uses the fused paths:
// CPU tensors of float32/float64 with the switch on. Everywhere else (CUDA, bf16/half,
// autocast) the composite ATen expressions in layers.cpp run instead, and tests check the two
// agree, forward and backward.
// Legend: B batch, T time, C width, H heads, D = C/H head dim.
#pragma once

#include <torch/torch.h>

namespace depthlab::model {

/// True when the fused functions handle `x`: CPU, float32/float64, strided, and the
/// switch kernels::fusedKernelsEnabled() on.
bool fusedOpsApply(const torch::Tensor& x);

/// scale * weight * x / sqrt(mean(x^2, -1) + eps): (..., C) -> (..., C), weight (C).
torch::Tensor fusedRmsNorm(const torch::Tensor& x, const torch::Tensor& weight, double eps,
                           double scale);

}  // namespace depthlab::model

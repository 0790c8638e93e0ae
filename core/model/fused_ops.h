// Autograd functions over the CPU kernels of kernels/cpu_kernels.h: RMSNorm with the LNS
// factor folded in, alone or after the residual add (RoPE with the head split and SwiGLU:
// model/packed_ops.h; causal attention: model/causal_attention.h). They have hand-written
// backwards (first order only; nothing in the lab differentiates twice). `fusedOpsApply(x)` says
// when layers.cpp uses the fused paths: CPU tensors of float32/float64 with the switch on.
// Everywhere else (CUDA, bf16/half, autocast) the composite ATen expressions in layers.cpp run
// instead, and tests check the two agree, forward and backward.
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

/// {x + residual, fusedRmsNorm(x + residual)} in one pass: x, residual (..., C) of one shape
/// and type -> the stream (..., C) and its norm (..., C). Backward adds the stream's gradient
/// into the norm's dx in the same pass. The same numbers as the two steps taken apart.
std::pair<torch::Tensor, torch::Tensor> fusedAddRmsNorm(const torch::Tensor& x,
                                                        const torch::Tensor& residual,
                                                        const torch::Tensor& weight, double eps,
                                                        double scale);

}  // namespace depthlab::model

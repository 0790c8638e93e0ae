// Autograd functions that consume one fused GEMM's packed output whole, so neither pass
// splits or concatenates it: q/k/v heads (RoPE on q and k, the head split on all three) from
// one q/k/v product, and SwiGLU from one gate/up product. Each backward writes its gradient
// straight into the packed layout the GEMM's backward reads (no cat of three or two
// gradients), and SwiGLU's backward is one pass instead of four. CPU only, under the same
// switch as model/fused_ops.h (`fusedOpsApply`); tests check them against the composite
// expressions, forward and backward.
// Legend: B batch, T time, H query heads, K key/value heads, D head dim, F FFN width.
#pragma once

#include <torch/torch.h>

#include <vector>

namespace depthlab::model {

/// qkv (B, T, (H + 2K) D) as one linear layer writes it -> {q (B, H, T, D) with RoPE,
/// k (B, K, T, D) with RoPE, v (B, K, T, D)}, all contiguous. cos, sin: (>= T, D).
std::vector<torch::Tensor> fusedQkvHeads(const torch::Tensor& qkv, const torch::Tensor& cos,
                                         const torch::Tensor& sin, int64_t heads,
                                         int64_t kvHeads);

/// gu (..., 2F), gate in [0, F) and up in [F, 2F) -> silu(gate) * up (..., F).
torch::Tensor fusedSwiglu(const torch::Tensor& gu);

}  // namespace depthlab::model

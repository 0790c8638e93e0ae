// Causal self-attention on the CPU as one autograd function, computed in blocks of query rows:
// block r multiplies its queries only with the keys up to its own last row, so the GEMMs skip
// the masked upper triangle (blocks of 16 rows up to T = 64, 32 beyond: at T = 256 they do 9/16
// of the full products), and the scale, the mask and the softmax are one pass over each block's
// scores (kernels/attention_kernels.h). Backward is the same in blocks: query rows for dq, key
// columns for dk and dv. The probabilities are kept for backward, as the composite expression
// keeps them.
// Used by layers.cpp where LibTorch has no scaled_dot_product_attention (1.x) under
// `fusedOpsApply`; tests compare it with softmax(mask + q k^T * scale) v, forward and backward.
// Legend: B batch, H heads, T time, D head dim.
#pragma once

#include <torch/torch.h>

namespace depthlab::model {

/// softmax(q k^T * scale, future positions masked) v per head, the heads merged on the way
/// out: q, k, v (B, H, T, D) -> (B, T, H * D), the output projection's input, written in place
/// by the GEMMs (no transposed copy of the output forward, none of its gradient backward).
torch::Tensor fusedCausalAttention(const torch::Tensor& q, const torch::Tensor& k,
                                   const torch::Tensor& v, double scale);

}  // namespace depthlab::model

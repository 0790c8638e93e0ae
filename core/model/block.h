// Block: the one transformer block every scheme shares. Its BlockPlan (block_plan.h) says
// where norms sit, what constant depth scale they carry, and which branch scales exist.
// Legend: B batch, T time, C model width.
#pragma once

#include <torch/torch.h>

#include <optional>
#include <utility>

#include "model/block_plan.h"
#include "model/layers.h"

namespace depthlab::model {

/// Optional capture of a block's internals for the probes (only filled when asked).
struct BlockTrace {
  torch::Tensor attnNormOut;  // (B, T, C) scaled norm output entering attention (pre-LN family);
                              // with norms only after the sublayers (OLMo 2) N(A(x))
  torch::Tensor ffnNormOut;   // (B, T, C) scaled norm output entering the MLP; OLMo 2: N(F(h));
                              // a parallel block (GPT-NeoX): N2 of the block's input x;
                              // HybridNorm: attnNormOut is x itself, ffnNormOut N2(h)
  torch::Tensor attnNormIn;   // (B, T, C) DyT only: what the norm before attention reads
  torch::Tensor ffnNormIn;    // (B, T, C) DyT only: what the norm before the MLP reads
  // With `detailed` only (the probes that read them ask; other traced passes skip the cost):
  bool detailed = false;
  torch::Tensor attnDelta;     // (B, T, C) what the attention branch adds to the residual stream
                               // (scaled as the scheme scales it, before any norm after the add)
  torch::Tensor attnStream;    // (B, T, C) the stream it is added to (x)
  torch::Tensor ffnDelta;      // (B, T, C) ... the MLP branch
  torch::Tensor ffnStream;     // (B, T, C) its stream (h; a parallel block's: x; HybridNorm: N2(h))
  torch::Tensor attnEntropy;   // (B, H, T) entropy of each query's attention over its keys
  torch::Tensor attnFirstKey;  // (B, H, T) the attention each query gives the first position
};

class BlockImpl : public torch::nn::Module {
 public:
  /// A block of `model`'s shape (heads, key/value heads, head dim, biases, norm) following `plan`.
  BlockImpl(const BlockPlan& plan, const ModelConfig& model);
  /// (B, T, C) -> (B, T, C). `scaleOverride` replaces the plan's depth scale (pruning with
  /// renumbered LNS factors); `trace` receives the scaled norm outputs when non-null.
  torch::Tensor forward(const torch::Tensor& x, const Rope& rope,
                        std::optional<double> scaleOverride = std::nullopt,
                        BlockTrace* trace = nullptr);
  const BlockPlan& plan() const { return m_plan; }

  /// True when the residual adds of this block can be deferred into the following norms:
  /// the Pre-LN family (norm before the sublayer, the skip path unscaled), not Post-LN,
  /// norm-input scaling, scaling after the residual add or a parallel block.
  bool defersResidual() const;
  /// forward() with each residual add fused into the norm after it: the block's input is
  /// x + pending (pending undefined: x alone), and it returns {x', pending'} whose sum is what
  /// forward() returns. The same numbers as forward() (the same adds, in the same order).
  std::pair<torch::Tensor, torch::Tensor> forwardDeferred(
      const torch::Tensor& x, const torch::Tensor& pending, const Rope& rope,
      std::optional<double> scaleOverride = std::nullopt);

  Attention self_attn{nullptr};
  SwiGlu mlp{nullptr};
  Norm input_layernorm{nullptr}, post_attention_layernorm{nullptr};  // null: !normBeforeSublayer
  Norm attn_out_norm{nullptr}, mlp_out_norm{nullptr};                // sandwich only
  torch::Tensor skip_attn, skip_mlp;                                 // skipinit: () scalars
  torch::Tensor layerscale_attn, layerscale_mlp;                     // layerscale: (C)
  torch::Tensor lns_scale;                                           // lns_learnable: (C)
  torch::nn::Linear lns_gate{nullptr};  // lns_learnable: C -> 1 readout

 private:
  enum class Branch { Attn, Ffn };
  /// HybridNorm's sublayers: x + A_qkv(x); N2(h) + F(N2(h)); (B, T, C) -> (B, T, C).
  torch::Tensor hybridSublayer(const torch::Tensor& x, Branch which, const Rope& rope,
                               BlockTrace* trace);
  /// x + the branch's output (the Post-LN family: its norm of that), (B, T, C).
  torch::Tensor sublayer(const torch::Tensor& x, Branch which, const Rope& rope, double s,
                         BlockTrace* trace);
  /// What one sublayer adds to the stream it reads (not Post-LN): norm, branch, sandwich norm,
  /// depth and branch scales; (B, T, C) -> (B, T, C).
  torch::Tensor branchOutput(const torch::Tensor& x, Branch which, const Rope& rope, double s,
                             BlockTrace* trace);
  /// skipinit's and layerscale's learnable scales on a branch output.
  torch::Tensor branchScale(torch::Tensor y, Branch which) const;
  /// Keeps (with a detailed trace) what branch `which` adds and the stream it adds it to.
  static void recordBranch(BlockTrace* trace, Branch which, const torch::Tensor& delta,
                           const torch::Tensor& stream);
  /// self_attn(x, rope); with a detailed trace, its probabilities' entropy and first-key share.
  torch::Tensor attend(const torch::Tensor& x, const Rope& rope, BlockTrace* trace);
  /// {x + pending, the scaled branch output} for one sublayer of forwardDeferred.
  std::pair<torch::Tensor, torch::Tensor> deferredSublayer(const torch::Tensor& x,
                                                           const torch::Tensor& pending,
                                                           Branch which, const Rope& rope,
                                                           double s);
  /// lns_learnable's scale on a norm output: per-channel scale times the causal gate.
  torch::Tensor learnableScaleOut(const torch::Tensor& n);

  BlockPlan m_plan;
};
TORCH_MODULE(Block);

}  // namespace depthlab::model

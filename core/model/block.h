// Block: the one transformer block every scheme shares. Its BlockPlan (block_plan.h) says
// where norms sit, what constant depth scale they carry, and which branch scales exist.
// Legend: B batch, T time, C model width.
#pragma once

#include <torch/torch.h>

#include <optional>

#include "model/block_plan.h"
#include "model/layers.h"

namespace depthlab::model {

/// Optional capture of a block's internals for the probes (only filled when asked).
struct BlockTrace {
  torch::Tensor attnNormOut;  // (B, T, C) scaled norm output entering attention (pre-LN family)
  torch::Tensor ffnNormOut;   // (B, T, C) scaled norm output entering the MLP
};

class BlockImpl : public torch::nn::Module {
 public:
  BlockImpl(const BlockPlan& plan, int64_t dModel, int64_t nHeads, int64_t dFF, double eps,
            bool layerNorm);
  /// (B, T, C) -> (B, T, C). `scaleOverride` replaces the plan's depth scale (pruning with
  /// renumbered LNS factors); `trace` receives the scaled norm outputs when non-null.
  torch::Tensor forward(const torch::Tensor& x, const Rope& rope,
                        std::optional<double> scaleOverride = std::nullopt,
                        BlockTrace* trace = nullptr);
  const BlockPlan& plan() const { return m_plan; }

  Attention self_attn{nullptr};
  SwiGlu mlp{nullptr};
  Norm input_layernorm{nullptr}, post_attention_layernorm{nullptr};
  Norm attn_out_norm{nullptr}, mlp_out_norm{nullptr};  // sandwich only
  torch::Tensor skip_attn, skip_mlp;                   // skipinit: () scalars
  torch::Tensor layerscale_attn, layerscale_mlp;       // layerscale: (C)
  torch::Tensor lns_scale;                             // lns_learnable: (C)
  torch::nn::Linear lns_gate{nullptr};                 // lns_learnable: C -> 1 readout

 private:
  enum class Branch { Attn, Ffn };
  torch::Tensor sublayer(const torch::Tensor& x, Branch which, const Rope& rope, double s,
                         BlockTrace* trace);
  /// lns_learnable's scale on a norm output: per-channel scale times the causal gate.
  torch::Tensor learnableScaleOut(const torch::Tensor& n);

  BlockPlan m_plan;
};
TORCH_MODULE(Block);

}  // namespace depthlab::model

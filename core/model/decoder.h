// Decoder: the LLaMA-style language model of the paper. Untied embedding and LM head (tied when
// the config says so: then there is no lm_head module), a stack of Blocks planned by the scheme,
// a final norm that is never depth-scaled. Activations are float32 (or the autocast dtype);
// parameters may be stored in bf16/fp16 (an imported model, see ParameterSource).
// Parameter names follow Hugging Face Llama: embed_tokens, layers.N.*, norm, lm_head (and
// embed_positions where the model learns absolute positions, GPT-2).
// Legend: B batch, T time, C width, V vocab, L blocks.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/block.h"
#include "model/model_config.h"

namespace depthlab::model {

struct ForwardOptions {
  std::vector<bool> skip;             // size L: block l skipped (identity) when true
  std::vector<double> scaleOverride;  // size L or empty: per-block depth scale to use
};

/// What a traced forward pass captured (probes read it; nothing else does).
struct ForwardTrace {
  std::vector<torch::Tensor> blockInputs;  // L+1 entries: input of block l, last = final residual
  std::vector<BlockTrace> blocks;          // L entries: scaled norm outputs
  bool detailed = false;  // the blocks keep their branches and attention statistics too
};

/// Gives the tensor for parameter `name` (shaped like `like`) when a decoder is built from
/// existing weights; it throws when it has none. The decoder takes the tensor as the
/// parameter's storage (no copy; any float dtype) and freezes it (no gradient).
using ParameterSource =
    std::function<torch::Tensor(const std::string& name, const torch::Tensor& like)>;

class DecoderImpl : public torch::nn::Module {
 public:
  /// Random weights as the scheme prescribes, or, with `source`, the source's weights: each
  /// block's freshly made parameters are replaced as soon as it exists, so building a large
  /// model holds at most one block's float32 weights besides the source's.
  DecoderImpl(const ModelConfig& model, const SchemeOptions& options, const std::string& scheme,
              const ParameterSource& source = nullptr);

  torch::Tensor forward(const torch::Tensor& idx);  // (B, T) int64 -> (B, T, V) logits
  /// What block 0 reads: the token embeddings in float32, scaled as the config says (Gemma:
  /// sqrt(C)), plus the learned positions (GPT-2): (B, T) int64 -> (B, T, C).
  torch::Tensor embed(const torch::Tensor& idx);
  torch::Tensor forward(const torch::Tensor& idx, const ForwardOptions& opts,
                        ForwardTrace* trace = nullptr);
  /// Runs blocks startBlock..L-1 on a residual stream x (B, T, C) entering block startBlock,
  /// then the final norm and head: (B, T, V). forward() is embed() + forwardFrom(0).
  torch::Tensor forwardFrom(const torch::Tensor& x, int startBlock, const ForwardOptions& opts,
                            ForwardTrace* trace = nullptr);
  /// Mean token cross-entropy of next-token prediction: idx, targets (B, T); targets of -100
  /// (pads, data::kIgnoreTarget) are left out of the mean, on the CPU and the CUDA kernel alike.
  torch::Tensor loss(const torch::Tensor& idx, const torch::Tensor& targets,
                     const ForwardOptions* opts = nullptr);
  /// Re-draws every weight as the scheme prescribes (called by the constructor).
  void initWeights();
  void to(torch::Device device);

  const std::string& scheme() const { return m_scheme; }
  const ModelConfig& config() const { return m_config; }
  const SchemeOptions& options() const { return m_options; }
  const std::vector<BlockPlan>& plans() const { return m_plans; }
  int nLayers() const { return static_cast<int>(m_plans.size()); }
  Block& block(int i) { return m_blocks[static_cast<size_t>(i)]; }
  /// The rotary tables block i uses (scaled as the config says; Gemma 3's local ones).
  const Rope& rope(int i = 0) const;
  /// Parameters that take the separate lns_learnable learning rate (empty otherwise).
  std::vector<torch::Tensor> lnsScaleParameters();
  std::vector<torch::Tensor> otherParameters();

  torch::nn::Embedding embed_tokens{nullptr};
  torch::nn::Embedding embed_positions{nullptr};  // learnedPositions only (GPT-2)
  torch::nn::ModuleList layers{nullptr};
  Norm norm{nullptr};
  torch::nn::Linear lm_head{nullptr};  // null when tieEmbeddings
  torch::Tensor embed_scale;           // DyT schemes only: () learnable, init sqrt(C)

 private:
  /// (B, T, C) -> (B, T, V): the LM head, or the embedding's transpose when tied.
  torch::Tensor head(const torch::Tensor& h);
  ModelConfig m_config;
  SchemeOptions m_options;
  std::string m_scheme;
  std::vector<BlockPlan> m_plans;
  std::vector<Block> m_blocks;
  Rope m_rope;
  std::optional<Rope> m_localRope;  // Gemma 3's sliding layers (plan.localRope)
};
TORCH_MODULE(Decoder);

}  // namespace depthlab::model

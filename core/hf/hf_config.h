// Reading a Hugging Face model folder's config.json into DepthLab's model config, for the
// architectures DepthLab's one Decoder reproduces exactly (each a block plan and a weight map,
// hf/hf_weight_map.h): LlamaForCausalLM (also DeepSeek LLM's dense checkpoints),
// MistralForCausalLM, Qwen2ForCausalLM (Qwen2.5 too), Qwen3ForCausalLM (dense; q/k RMSNorm per
// head), Olmo2ForCausalLM (norms after each sublayer, q/k RMSNorm over the whole projection),
// Phi3ForCausalLM (fused qkv and gate_up weights) and Gemma2ForCausalLM ((1 + w) RMSNorms
// before and after each sublayer, GeGLU, embeddings times sqrt(d), query_pre_attn_scalar,
// attention and final soft-capping; its sliding window caps the context) and Gemma3ForCausalLM
// (Gemma 3 text: as Gemma 2 with q/k norms per head, no soft caps by default, and a rope base
// of their own for the sliding layers), GPT2LMHeadModel (LayerNorm with bias, learned absolute
// positions, no RoPE, biases on every projection, an ungated MLP, tied head; hf_config_gpt.cpp)
// and GPTNeoXForCausalLM (Pythia: LayerNorm with bias, biases, partial rotary, parallel or
// sequential residual, an ungated MLP); rope types default, linear, dynamic,
// llama3, yarn and longrope (model/rope_scaling.h). Everything DepthLab cannot reproduce is
// refused here, before any weight is read, with a message naming the field and what is
// supported: another architecture, mixture-of-experts models (num_local_experts, num_experts,
// n_routed_experts; Mixtral, Qwen2/3-MoE, DeepSeek V2/V3), another activation or rope type, a
// partial rotary factor outside GPT-NeoX and Phi-3, biases the decoder lacks, GPT-2's layer-wise
// attention scaling and cross-attention, and sizes that are zero, negative or absurd.
// Reads transformers 4.x (rope_theta, rope_scaling, torch_dtype) and 5.x (rope_parameters,
// dtype) configs. No torch, no weights.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/model_config.h"

namespace depthlab::hf {

/// A model folder DepthLab cannot use, and why (the message names the file and the field).
class HfModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline const std::vector<std::string> kSupportedArchitectures = {
    "LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM",
    "Olmo2ForCausalLM", "Phi3ForCausalLM", "Gemma2ForCausalLM", "Gemma3ForCausalLM",
    "GPT2LMHeadModel", "GPTNeoXForCausalLM"};

struct HfModelConfig {
  std::string architecture;          // one of kSupportedArchitectures
  model::ModelConfig model;          // seqLen = maxPositions; the caller sets its own length
  int64_t maxPositions = 0;          // max_position_embeddings
  std::string dtype;                 // "float32", "bfloat16", "float16" ("" when unstated)
  std::optional<int64_t> slidingWindow;  // attention window when the model uses one
  std::optional<int64_t> bosTokenId;
};

/// Parses `dir`/config.json; throws HfModelError.
HfModelConfig readHfConfig(const std::string& dir);
/// Parses config.json text (`where` names it in messages); throws HfModelError.
HfModelConfig parseHfConfig(const std::string& text, const std::string& where);

}  // namespace depthlab::hf

// Where each of the decoder's parameters lives in a Hugging Face checkpoint, per architecture:
// the one Decoder (model/decoder.h) names its parameters as Llama does (layers.N.self_attn.q_proj
// .weight, ...); a family that names or packs them otherwise is a map here, not another decoder.
//   Llama, Mistral, Qwen2, Qwen3   model.<name>, lm_head.weight (Qwen3 adds self_attn.q_norm/k_norm)
//   Olmo2    the norms after each sublayer are post_attention_layernorm (after attention: our
//            attn_out_norm) and post_feedforward_layernorm (our mlp_out_norm); q/k_norm whole
//   Gemma2   norms before and after each sublayer: input_layernorm, post_attention_layernorm
//            (after attention: our attn_out_norm), pre_feedforward_layernorm (our
//            post_attention_layernorm), post_feedforward_layernorm (our mlp_out_norm); every
//            norm weight w is read as 1 + w
//   Gemma3   as Gemma2, with self_attn.q_norm/k_norm (per head, 1 + w too)
//   Phi3     self_attn.qkv_proj (H*D + 2*K*D, C) holds q, k, v as row blocks in that order;
//            mlp.gate_up_proj (2F, C) holds gate then up
//   GPT2     transformer.wte / wpe (our embed_positions) / h.N.ln_1, ln_2 / ln_f, each LayerNorm
//            with a bias; Conv1D weights stored (in, out), read transposed: attn.c_attn (C, 3C)
//            holds q, k, v as column blocks, attn.c_proj, mlp.c_fc (our up_proj), mlp.c_proj
//            (our down_proj), all with biases; the head tied to wte unless the config says not
//   GPTNeoX  gpt_neox.embed_in / layers.N.input_layernorm, post_attention_layernorm /
//            final_layer_norm; attention.query_key_value (3C, C) holds per head h the rows of
//            q, k, v of that head in turn ((H, 3, D) by rows: our q_proj gathers rows
//            [3Dh, 3Dh + D) of each h, a copy); attention.dense, mlp.dense_h_to_4h (our
//            up_proj), mlp.dense_4h_to_h (our down_proj), with biases; embed_out is the head
// No torch here: names and shapes only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hf/hf_config.h"

namespace depthlab::hf {

/// A parameter's place in the checkpoint: a whole tensor, or rows [rowBegin, rowEnd) of one
/// (of each of its `groups` equal row groups, joined). `transposed`: the tensor is stored
/// (in, out) (GPT-2's Conv1D) and read as its transpose; rows are then its columns.
struct WeightSlot {
  std::string tensor;   // the checkpoint's name, e.g. model.layers.0.self_attn.qkv_proj.weight
  int64_t rowBegin = 0;
  int64_t rowEnd = -1;  // -1: the whole tensor
  bool plusOne = false; // Gemma's norms scale by (1 + weight): the weight + 1, in float32
  bool transposed = false;
  int64_t groups = 1;   // GPT-NeoX's fused qkv: one group of 3D rows per head
};

/// The decoder's parameters for `model` in construction order: name -> shape (Llama names,
/// without the "model." prefix: embed_tokens.weight, layers.0.self_attn.q_proj.weight, ...).
std::vector<std::pair<std::string, std::vector<int64_t>>> decoderParameters(
    const model::ModelConfig& model);

/// Where `parameter` (a decoderParameters name) is in a checkpoint of `config`.
WeightSlot weightSlot(const HfModelConfig& config, const std::string& parameter);

/// Every tensor a checkpoint of `config` must hold: checkpoint name -> shape.
std::map<std::string, std::vector<int64_t>> expectedTensors(const HfModelConfig& config);

/// The prefix of the family's base model in a checkpoint of its LM class ("model.",
/// GPT-2's "transformer.", GPT-NeoX's "gpt_neox."): a checkpoint saved from the base model
/// alone (the original gpt2 weights) names its tensors without it.
std::string basePrefix(const HfModelConfig& config);

}  // namespace depthlab::hf

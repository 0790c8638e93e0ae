// Reading a Hugging Face model folder's config.json into DepthLab's model config, for the
// architectures whose decoders DepthLab's Decoder reproduces exactly: LlamaForCausalLM,
// MistralForCausalLM and Qwen2ForCausalLM. Everything DepthLab cannot reproduce is refused here
// with a message naming it (another architecture or activation, rope scaling types other than
// the default, Llama's attention/MLP biases), as are sizes that are zero, negative or absurd.
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
    "LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM"};

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

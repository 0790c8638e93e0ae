// See hf_weight_map.h.
#include "hf/hf_weight_map.h"

#include <algorithm>
#include <map>

namespace depthlab::hf {

namespace {

/// "layers.3.mlp.up_proj.weight" -> {"model.layers.3.", "mlp.up_proj.weight"}; other names: {"", name}.
std::pair<std::string, std::string> splitLayer(const std::string& name) {
  if (name.rfind("layers.", 0) != 0) return {"", name};
  const auto dot = name.find('.', 7);
  return {"model." + name.substr(0, dot + 1), name.substr(dot + 1)};
}

WeightSlot phi3Slot(const model::ModelConfig& m, const std::string& layer, const std::string& rest) {
  const int64_t HD = int64_t{m.nHeads} * m.headDimension();
  const int64_t KD = int64_t{m.kvHeads()} * m.headDimension();
  const int64_t F = m.dFF;
  const std::string qkv = layer + "self_attn.qkv_proj.weight";
  const std::string gateUp = layer + "mlp.gate_up_proj.weight";
  if (rest == "self_attn.q_proj.weight") return {qkv, 0, HD};
  if (rest == "self_attn.k_proj.weight") return {qkv, HD, HD + KD};
  if (rest == "self_attn.v_proj.weight") return {qkv, HD + KD, HD + 2 * KD};
  if (rest == "mlp.gate_proj.weight") return {gateUp, 0, F};
  if (rest == "mlp.up_proj.weight") return {gateUp, F, 2 * F};
  return {layer + rest};
}

WeightSlot gemmaSlot(const std::string& layer, const std::string& rest) {
  static const std::map<std::string, std::string> renamed = {
      {"attn_out_norm.weight", "post_attention_layernorm.weight"},
      {"post_attention_layernorm.weight", "pre_feedforward_layernorm.weight"},
      {"mlp_out_norm.weight", "post_feedforward_layernorm.weight"}};
  const auto it = renamed.find(rest);
  return {layer + (it == renamed.end() ? rest : it->second)};
}

/// GPT-2: Conv1D weights transposed, c_attn's q, k, v as column blocks.
WeightSlot gpt2Slot(const model::ModelConfig& m, const std::string& parameter) {
  static const std::map<std::string, std::string> top = {
      {"embed_tokens.weight", "transformer.wte.weight"},
      {"embed_positions.weight", "transformer.wpe.weight"},
      {"norm.weight", "transformer.ln_f.weight"}, {"norm.bias", "transformer.ln_f.bias"}};
  if (auto it = top.find(parameter); it != top.end()) return {it->second};
  if (parameter.rfind("layers.", 0) != 0) return {parameter};  // lm_head.weight
  const auto dot = parameter.find('.', 7);
  const std::string layer = "transformer.h." + parameter.substr(7, dot - 7) + ".";
  const std::string rest = parameter.substr(dot + 1);
  const auto end = rest.rfind('.');
  const std::string module = rest.substr(0, end), kind = rest.substr(end + 1);  // weight | bias
  const bool weight = kind == "weight";
  const int64_t C = m.dModel;
  static const std::map<std::string, std::string> renamed = {
      {"input_layernorm", "ln_1"}, {"post_attention_layernorm", "ln_2"},
      {"self_attn.o_proj", "attn.c_proj"}, {"mlp.up_proj", "mlp.c_fc"},
      {"mlp.down_proj", "mlp.c_proj"}};
  static const std::map<std::string, int64_t> qkv = {
      {"self_attn.q_proj", 0}, {"self_attn.k_proj", 1}, {"self_attn.v_proj", 2}};
  if (auto it = qkv.find(module); it != qkv.end()) {
    WeightSlot slot{layer + "attn.c_attn." + kind, it->second * C, (it->second + 1) * C};
    slot.transposed = weight;
    return slot;
  }
  const auto it = renamed.find(module);
  WeightSlot slot{layer + (it == renamed.end() ? module : it->second) + "." + kind};
  slot.transposed = weight && module.find("layernorm") == std::string::npos;
  return slot;
}

/// GPT-NeoX: renamed modules, q, k and v gathered per head from query_key_value.
WeightSlot gptNeoxSlot(const model::ModelConfig& m, const std::string& parameter) {
  static const std::map<std::string, std::string> top = {
      {"embed_tokens.weight", "gpt_neox.embed_in.weight"},
      {"norm.weight", "gpt_neox.final_layer_norm.weight"},
      {"norm.bias", "gpt_neox.final_layer_norm.bias"}, {"lm_head.weight", "embed_out.weight"}};
  if (auto it = top.find(parameter); it != top.end()) return {it->second};
  const auto dot = parameter.find('.', 7);
  const std::string layer = "gpt_neox." + parameter.substr(0, dot + 1);
  const std::string rest = parameter.substr(dot + 1);
  const auto end = rest.rfind('.');
  const std::string module = rest.substr(0, end), kind = rest.substr(end + 1);
  const int64_t D = m.headDimension();
  static const std::map<std::string, int64_t> qkv = {
      {"self_attn.q_proj", 0}, {"self_attn.k_proj", 1}, {"self_attn.v_proj", 2}};
  if (auto it = qkv.find(module); it != qkv.end()) {
    WeightSlot slot{layer + "attention.query_key_value." + kind, it->second * D,
                    (it->second + 1) * D};
    slot.groups = m.nHeads;  // rows (H, 3, D): each head's q, k, v in turn
    return slot;
  }
  static const std::map<std::string, std::string> renamed = {
      {"self_attn.o_proj", "attention.dense"}, {"mlp.up_proj", "mlp.dense_h_to_4h"},
      {"mlp.down_proj", "mlp.dense_4h_to_h"}};
  const auto it = renamed.find(module);
  return {layer + (it == renamed.end() ? module : it->second) + "." + kind};
}

bool isNormWeight(const std::string& name) {
  const std::string tail = "norm.weight";
  return name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
}

WeightSlot mappedSlot(const HfModelConfig& c, const std::string& parameter) {
  if (c.architecture == "GPT2LMHeadModel") return gpt2Slot(c.model, parameter);
  if (c.architecture == "GPTNeoXForCausalLM") return gptNeoxSlot(c.model, parameter);
  if (parameter.rfind("lm_head.", 0) == 0) return {parameter};
  const auto [layer, rest] = splitLayer(parameter);
  if (layer.empty()) return {"model." + parameter};
  if (c.architecture == "Phi3ForCausalLM") return phi3Slot(c.model, layer, rest);
  if (c.architecture == "Gemma2ForCausalLM" || c.architecture == "Gemma3ForCausalLM") {
    return gemmaSlot(layer, rest);
  }
  if (c.architecture == "Olmo2ForCausalLM") {
    if (rest == "attn_out_norm.weight") return {layer + "post_attention_layernorm.weight"};
    if (rest == "mlp_out_norm.weight") return {layer + "post_feedforward_layernorm.weight"};
  }
  return {layer + rest};
}

}  // namespace

std::vector<std::pair<std::string, std::vector<int64_t>>> decoderParameters(
    const model::ModelConfig& m) {
  const int64_t C = m.dModel, D = m.headDimension(), H = m.nHeads, K = m.kvHeads(), F = m.dFF;
  const bool layerNorm = m.norm == "layernorm";  // a weight and a bias
  std::vector<std::pair<std::string, std::vector<int64_t>>> out;
  auto norm = [&](const std::string& name) {
    out.push_back({name + ".weight", {C}});
    if (layerNorm) out.push_back({name + ".bias", {C}});
  };
  auto linear = [&](const std::string& name, int64_t rows, int64_t columns, bool bias) {
    out.push_back({name + ".weight", {rows, columns}});
    if (bias) out.push_back({name + ".bias", {rows}});
  };
  out.push_back({"embed_tokens.weight", {m.vocabSize, C}});
  if (m.learnedPositions > 0) out.push_back({"embed_positions.weight", {m.learnedPositions, C}});
  for (int l = 0; l < m.nLayers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    linear(p + "self_attn.q_proj", H * D, C, m.qkvBias);
    linear(p + "self_attn.k_proj", K * D, C, m.qkvBias);
    linear(p + "self_attn.v_proj", K * D, C, m.qkvBias);
    linear(p + "self_attn.o_proj", C, H * D, m.outBias);
    if (m.qkNorm != model::QkNorm::None) {
      const bool perHead = m.qkNorm == model::QkNorm::PerHead;
      out.push_back({p + "self_attn.q_norm.weight", {perHead ? D : H * D}});
      out.push_back({p + "self_attn.k_norm.weight", {perHead ? D : K * D}});
    }
    if (m.gatedMlp) linear(p + "mlp.gate_proj", F, C, m.mlpBias);
    linear(p + "mlp.up_proj", F, C, m.mlpBias);
    linear(p + "mlp.down_proj", C, F, m.mlpBias);
    if (m.normBeforeSublayer) {
      norm(p + "input_layernorm");
      norm(p + "post_attention_layernorm");
    }
    if (m.normAfterSublayer) {
      norm(p + "attn_out_norm");
      norm(p + "mlp_out_norm");
    }
  }
  norm("norm");
  if (!m.tieEmbeddings) out.push_back({"lm_head.weight", {m.vocabSize, C}});
  return out;
}

WeightSlot weightSlot(const HfModelConfig& c, const std::string& parameter) {
  WeightSlot slot = mappedSlot(c, parameter);
  const bool gemma = c.architecture == "Gemma2ForCausalLM" || c.architecture == "Gemma3ForCausalLM";
  if (gemma && isNormWeight(parameter)) slot.plusOne = true;
  return slot;
}

std::map<std::string, std::vector<int64_t>> expectedTensors(const HfModelConfig& c) {
  std::map<std::string, std::vector<int64_t>> out;  // shapes as read: (rows, columns...)
  std::map<std::string, bool> transposed;
  for (const auto& [name, shape] : decoderParameters(c.model)) {
    const WeightSlot slot = weightSlot(c, name);
    transposed[slot.tensor] = slot.transposed;
    if (slot.rowEnd < 0) {
      out[slot.tensor] = shape;
      continue;
    }
    auto& fused = out[slot.tensor];  // (rows so far, columns...)
    if (fused.empty()) {
      fused = shape;
      fused[0] = 0;
    }
    fused[0] = std::max(fused[0], slot.groups * slot.rowEnd);
  }
  for (auto& [tensor, shape] : out) {  // stored (in, out): GPT-2's Conv1D
    if (transposed[tensor]) std::reverse(shape.begin(), shape.end());
  }
  return out;
}

std::string basePrefix(const HfModelConfig& c) {
  if (c.architecture == "GPT2LMHeadModel") return "transformer.";
  if (c.architecture == "GPTNeoXForCausalLM") return "gpt_neox.";
  return "model.";
}

}  // namespace depthlab::hf

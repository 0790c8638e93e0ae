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

bool isNormWeight(const std::string& name) {
  const std::string tail = "norm.weight";
  return name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
}

WeightSlot mappedSlot(const HfModelConfig& c, const std::string& parameter) {
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
  std::vector<std::pair<std::string, std::vector<int64_t>>> out;
  out.push_back({"embed_tokens.weight", {m.vocabSize, C}});
  for (int l = 0; l < m.nLayers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    out.push_back({p + "self_attn.q_proj.weight", {H * D, C}});
    if (m.qkvBias) out.push_back({p + "self_attn.q_proj.bias", {H * D}});
    out.push_back({p + "self_attn.k_proj.weight", {K * D, C}});
    if (m.qkvBias) out.push_back({p + "self_attn.k_proj.bias", {K * D}});
    out.push_back({p + "self_attn.v_proj.weight", {K * D, C}});
    if (m.qkvBias) out.push_back({p + "self_attn.v_proj.bias", {K * D}});
    out.push_back({p + "self_attn.o_proj.weight", {C, H * D}});
    if (m.qkNorm != model::QkNorm::None) {
      const bool perHead = m.qkNorm == model::QkNorm::PerHead;
      out.push_back({p + "self_attn.q_norm.weight", {perHead ? D : H * D}});
      out.push_back({p + "self_attn.k_norm.weight", {perHead ? D : K * D}});
    }
    out.push_back({p + "mlp.gate_proj.weight", {F, C}});
    out.push_back({p + "mlp.up_proj.weight", {F, C}});
    out.push_back({p + "mlp.down_proj.weight", {C, F}});
    if (m.normBeforeSublayer) {
      out.push_back({p + "input_layernorm.weight", {C}});
      out.push_back({p + "post_attention_layernorm.weight", {C}});
    }
    if (m.normAfterSublayer) {
      out.push_back({p + "attn_out_norm.weight", {C}});
      out.push_back({p + "mlp_out_norm.weight", {C}});
    }
  }
  out.push_back({"norm.weight", {C}});
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
  std::map<std::string, std::vector<int64_t>> out;
  for (const auto& [name, shape] : decoderParameters(c.model)) {
    const WeightSlot slot = weightSlot(c, name);
    if (slot.rowEnd < 0) {
      out[slot.tensor] = shape;
      continue;
    }
    auto& fused = out[slot.tensor];  // (rows so far, columns)
    if (fused.empty()) fused = {0, shape[1]};
    fused[0] = std::max(fused[0], slot.rowEnd);
  }
  return out;
}

}  // namespace depthlab::hf

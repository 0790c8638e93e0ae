// See hf_config.h.
#include "hf/hf_config.h"

#include "hf/config_reader.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace depthlab::hf {

namespace {

using json = nlohmann::json;
using Reader = detail::ConfigReader;

std::string supportedList() {
  std::string out;
  for (const auto& a : kSupportedArchitectures) out += (out.empty() ? "" : ", ") + a;
  return out;
}

/// Mixture-of-experts models, named as such before anything else is read.
void refuseMixtureOfExperts(const Reader& r, const std::string& name) {
  std::string why;
  for (const char* key : {"num_local_experts", "num_experts", "n_routed_experts"}) {
    if (r.has(key) && r.raw(key).is_number() && r.raw(key).get<double>() > 0) {
      why = "'" + std::string(key) + "' = " + r.raw(key).dump();
      break;
    }
  }
  const bool moeName =
      name.find("Moe") != std::string::npos || name.find("MoE") != std::string::npos ||
      name.find("moe") != std::string::npos || name.find("Mixtral") != std::string::npos ||
      name == "mixtral" || name.rfind("DeepseekV2", 0) == 0 || name.rfind("DeepseekV3", 0) == 0 ||
      name == "deepseek_v2" || name == "deepseek_v3";
  if (why.empty() && !moeName) return;
  throw HfModelError(r.where() + ": " + (name.empty() ? "the model" : "'" + name + "'") +
                     " is a mixture-of-experts model" + (why.empty() ? "" : " (" + why + ")") +
                     "; mixture-of-experts is not supported, DepthLab reads dense decoders (" +
                     supportedList() + ")");
}

std::string architectureOf(const Reader& r, const json& j) {
  static const std::map<std::string, std::string> byType = {
      {"llama", "LlamaForCausalLM"},   {"mistral", "MistralForCausalLM"},
      {"qwen2", "Qwen2ForCausalLM"},   {"qwen3", "Qwen3ForCausalLM"},
      {"olmo2", "Olmo2ForCausalLM"},   {"phi3", "Phi3ForCausalLM"},
      {"gemma2", "Gemma2ForCausalLM"}, {"gemma3_text", "Gemma3ForCausalLM"},
      {"gpt2", "GPT2LMHeadModel"},     {"gpt_neox", "GPTNeoXForCausalLM"}};
  std::string name;
  if (r.has("architectures")) {
    const json& a = j["architectures"];
    if (!a.is_array() || a.empty() || !a[0].is_string()) {
      throw HfModelError(r.where() + ": 'architectures' must be a list of names");
    }
    name = a[0].get<std::string>();
  }
  const std::string type = r.text("model_type", "");
  refuseMixtureOfExperts(r, name.empty() ? type : name);
  if (!name.empty()) {
    if (std::find(kSupportedArchitectures.begin(), kSupportedArchitectures.end(), name) ==
        kSupportedArchitectures.end()) {
      throw HfModelError(r.where() + ": 'architectures' names '" + name +
                         "', which is not supported (supported: " + supportedList() + ")");
    }
    return name;
  }
  if (auto it = byType.find(type); it != byType.end()) return it->second;
  std::string types;
  for (const auto& [t, arch] : byType) types += (types.empty() ? "" : ", ") + t;
  throw HfModelError(r.where() + ": model_type '" + type +
                     "' is not supported (supported: " + types + ")");
}

/// A number of the rope settings `p`; `fallback` when absent or null (none: required).
double ropeNumber(const Reader& r, const json& p, const char* key, std::optional<double> fallback) {
  if (!p.contains(key) || p[key].is_null()) {
    if (fallback) return *fallback;
    throw HfModelError(r.where() + ": the rope settings lack '" + key + "'");
  }
  return r.number(p[key], key, 0.0);
}

std::vector<double> ropeFactors(const Reader& r, const json& p, const char* key, size_t n) {
  if (!p.contains(key) || !p[key].is_array() || p[key].size() != n) {
    throw HfModelError(r.where() + ": longrope's '" + key + "' must be a list of " +
                       std::to_string(n) + " numbers (head dimension / 2)");
  }
  std::vector<double> out;
  for (const auto& v : p[key]) out.push_back(r.number(v, key, 0.0));
  return out;
}

/// The rope type's parameters, with transformers' defaults (modeling_rope_utils.py).
void readRopeScaling(const Reader& r, const json& p, model::ModelConfig& m, int64_t maxPositions) {
  auto& s = m.ropeScaling;
  const double L = static_cast<double>(maxPositions);
  // transformers gives a top-level original_max_position_embeddings (Phi-3 keeps it there)
  // priority over the rope settings' own.
  s.originalMaxPositions =
      r.has("original_max_position_embeddings")
          ? r.integer("original_max_position_embeddings", 1, int64_t{1} << 24)
          : static_cast<int64_t>(ropeNumber(r, p, "original_max_position_embeddings", L));
  const double L0 = static_cast<double>(s.originalMaxPositions);
  if (s.type == "linear" || s.type == "llama3") s.factor = ropeNumber(r, p, "factor", std::nullopt);
  if (s.type == "dynamic") s.factor = ropeNumber(r, p, "factor", 1.0);  // unused up to L
  if (s.type == "yarn" || s.type == "longrope") s.factor = ropeNumber(r, p, "factor", L / L0);
  if (s.type == "llama3") {
    s.lowFreqFactor = ropeNumber(r, p, "low_freq_factor", std::nullopt);
    s.highFreqFactor = ropeNumber(r, p, "high_freq_factor", std::nullopt);
    if (s.highFreqFactor <= s.lowFreqFactor) {
      throw HfModelError(r.where() + ": llama3 rope needs high_freq_factor > low_freq_factor");
    }
  } else if (s.type == "yarn") {
    s.betaFast = ropeNumber(r, p, "beta_fast", 32.0);
    s.betaSlow = ropeNumber(r, p, "beta_slow", 1.0);
    if (p.contains("truncate") && p["truncate"].is_boolean())
      s.truncate = p["truncate"].get<bool>();
    auto given = [&](const char* key) -> std::optional<double> {  // Python's truthiness
      if (!p.contains(key) || !p[key].is_number() || p[key].get<double>() == 0) return std::nullopt;
      return p[key].get<double>();
    };
    const auto mscale = given("mscale"), mscaleAll = given("mscale_all_dim");
    s.attentionFactor = ropeNumber(r, p, "attention_factor",
                                   mscale && mscaleAll ? model::yarnMscale(s.factor, *mscale) /
                                                             model::yarnMscale(s.factor, *mscaleAll)
                                                       : model::yarnMscale(s.factor));
  } else if (s.type == "longrope") {
    const size_t half = static_cast<size_t>(m.rotaryDims() / 2);  // of the rotated dims
    s.shortFactor = ropeFactors(r, p, "short_factor", half);
    s.longFactor = ropeFactors(r, p, "long_factor", half);
    s.attentionFactor =
        ropeNumber(r, p, "attention_factor",
                   s.factor <= 1 ? 1.0 : std::sqrt(1 + std::log(s.factor) / std::log(L0)));
  }
}

}  // namespace

namespace detail {

void readRope(const Reader& r, model::ModelConfig& m, int64_t maxPositions, const json& params,
              const json& scaling, double theta, PartialRotary partial) {
  std::string type = "default";
  static const json none = json::object();
  const json* chosen = &none;
  m.ropeBase = theta;
  for (const json* p : {&params, &scaling}) {
    if (p->is_null()) continue;
    if (!p->is_object()) throw HfModelError(r.where() + ": rope settings must be an object");
    if (p->contains("rope_theta")) m.ropeBase = r.number((*p)["rope_theta"], "rope_theta", 10000.0);
    for (const char* key : {"rope_type", "type"}) {
      if (p->contains(key) && (*p)[key].is_string()) {
        type = (*p)[key].get<std::string>();
        chosen = p;
      }
    }
  }
  const json* prf = &r.raw("partial_rotary_factor");
  for (const json* p : {&scaling, &params, chosen}) {
    if (p->is_object() && p->contains("partial_rotary_factor")) {
      prf = &(*p)["partial_rotary_factor"];
    }
  }
  m.rotaryFraction = r.number(*prf, "partial_rotary_factor", partial.fallback);
  if (m.rotaryFraction != 1.0 && !partial.allowed) {
    throw HfModelError(r.where() + ": 'partial_rotary_factor' = " + prf->dump() +
                       " is not supported for this architecture (DepthLab rotates part of a head "
                       "for GPTNeoXForCausalLM and Phi3ForCausalLM only; 1.0 here)");
  }
  if (m.rotaryFraction > 1.0 || m.rotaryDims() < 2 || m.rotaryDims() % 2 != 0) {
    throw HfModelError(r.where() +
                       ": 'partial_rotary_factor' = " + std::to_string(m.rotaryFraction) +
                       " rotates " + std::to_string(m.rotaryDims()) + " of a head's " +
                       std::to_string(m.headDimension()) +
                       " dims; it must be an even number "
                       "from 2 to the head dimension");
  }
  const auto& types = model::kRopeScalingTypes;
  if (std::find(types.begin(), types.end(), type) == types.end()) {
    std::string list;
    for (const auto& t : types) list += (list.empty() ? "" : ", ") + t;
    throw HfModelError(r.where() + ": rope scaling type '" + type + "' is not supported (" +
                       "supported: " + list + ")");
  }
  m.ropeScaling.type = type;
  if (type != "default") readRopeScaling(r, *chosen, m, maxPositions);
}

}  // namespace detail

namespace {

using detail::readRope;

/// A soft-capping value: the class default when absent, none (0) when null.
double softcap(const Reader& r, const json& j, const char* key, double classDefault) {
  if (!j.contains(key)) return classDefault;
  return j[key].is_null() ? 0.0 : r.number(j[key], key, 0.0);
}

/// Gemma 3's two ropes: full-attention layers rope_theta (1e6) with its scaling, sliding layers
/// rope_local_base_freq (1e4), unscaled; which layer is which from layer_types (or every
/// sliding_window_pattern-th layer full).
void readGemma3Rope(const Reader& r, HfModelConfig& c) {
  auto& m = c.model;
  static const json null;
  const json& params = r.raw("rope_parameters");
  const bool nested = params.is_object() &&
                      (params.contains("full_attention") || params.contains("sliding_attention"));
  auto part = [&](const char* key) -> const json& {
    return nested && params.contains(key) ? params[key] : null;
  };
  readRope(r, m, c.maxPositions, part("full_attention"), nested ? null : r.raw("rope_scaling"),
           r.number("rope_theta", 1e6));
  model::ModelConfig local = m;
  readRope(r, local, c.maxPositions, part("sliding_attention"), null,
           r.number("rope_local_base_freq", 10000.0));
  if (local.ropeScaling.type != "default") {
    throw HfModelError(r.where() + ": the sliding layers' rope type '" + local.ropeScaling.type +
                       "' is not supported (default only)");
  }
  m.localRopeBase = local.ropeBase;
  const json& types = r.raw("layer_types");
  const int64_t pattern = r.integer("sliding_window_pattern", 1, 1024, 6);
  m.localRopeLayers.assign(static_cast<size_t>(m.nLayers), false);
  for (int i = 0; i < m.nLayers; ++i) {
    std::string t = (i + 1) % pattern != 0 ? "sliding_attention" : "full_attention";
    if (!types.is_null()) {
      if (!types.is_array() || types.size() != static_cast<size_t>(m.nLayers) ||
          !types[i].is_string()) {
        throw HfModelError(r.where() + ": 'layer_types' must list one type per layer");
      }
      t = types[i].get<std::string>();
    }
    if (t != "sliding_attention" && t != "full_attention") {
      throw HfModelError(r.where() + ": layer type '" + t +
                         "' is not supported "
                         "(sliding_attention, full_attention)");
    }
    m.localRopeLayers[static_cast<size_t>(i)] = t == "sliding_attention";
  }
}

/// Gemma 2: (1 + weight) norms before and after each sublayer, GeGLU, embeddings times sqrt(C),
/// query_pre_attn_scalar, soft-capped scores and logits; sliding layers cap the context.
void readGemma(const Reader& r, HfModelConfig& c) {
  auto& m = c.model;
  const json& j = r.json_();
  if (r.flag("use_bidirectional_attention", false)) {
    throw HfModelError(r.where() +
                       ": 'use_bidirectional_attention' is true; DepthLab's "
                       "attention is causal");
  }
  m.normAfterSublayer = true;
  m.activation = "gelu_tanh";
  m.embedScale = std::sqrt(static_cast<double>(m.dModel));
  m.attnScale = 1.0 / std::sqrt(r.number("query_pre_attn_scalar", 256.0));
  const bool gemma3 = c.architecture == "Gemma3ForCausalLM";
  // Gemma 3: transformers' Gemma3Attention reads attn_logit_softcapping but never applies it
  // (its attention is called without a soft-cap), so neither does the lab: the reference's
  // logits, whatever the field says. Gemma 2 applies it.
  m.attnSoftcap = gemma3 ? 0.0 : softcap(r, j, "attn_logit_softcapping", 50.0);
  m.finalSoftcap = softcap(r, j, "final_logit_softcapping", gemma3 ? 0.0 : 30.0);
  if (gemma3) {
    m.qkNorm = model::QkNorm::PerHead;
    readGemma3Rope(r, c);
  }
  if (r.has("sliding_window")) c.slidingWindow = r.integer("sliding_window", 1, int64_t{1} << 24);
}

/// What sets each family apart from Llama: biases, q/k norms, where the norms sit, windows.
void readFamily(const Reader& r, HfModelConfig& c) {
  const std::string& a = c.architecture;
  auto& m = c.model;
  const bool qwen = a == "Qwen2ForCausalLM" || a == "Qwen3ForCausalLM";
  if (a == "Qwen2ForCausalLM") m.qkvBias = true;
  for (const char* key : {"attention_bias", "mlp_bias"}) {
    if (a != "Qwen2ForCausalLM" && r.flag(key, false)) {
      throw HfModelError(r.where() + ": '" + key + "' is true; DepthLab's decoder has no " +
                         (std::string(key) == "mlp_bias" ? "MLP" : "output-projection") +
                         " biases (only Qwen2's q/k/v biases)");
    }
  }
  if (a == "Qwen3ForCausalLM") m.qkNorm = model::QkNorm::PerHead;
  if (a == "Olmo2ForCausalLM") {
    m.qkNorm = model::QkNorm::Whole;
    m.normBeforeSublayer = false;
    m.normAfterSublayer = true;
  }
  if (qwen && r.flag("use_sliding_window", false)) {
    c.slidingWindow = r.integer("sliding_window", 1, int64_t{1} << 24, 4096);
  }
  if ((a == "MistralForCausalLM" || a == "Phi3ForCausalLM") && r.has("sliding_window")) {
    c.slidingWindow = r.integer("sliding_window", 1, int64_t{1} << 24);
  }
  if (a == "Gemma2ForCausalLM" || a == "Gemma3ForCausalLM") readGemma(r, c);
}

}  // namespace

HfModelConfig parseHfConfig(const std::string& text, const std::string& where) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw HfModelError(where + " is not a JSON object");
  Reader r(j, where);
  HfModelConfig c;
  c.architecture = architectureOf(r, j);
  auto finish = [&]() -> HfModelConfig {
    c.dtype = r.text("dtype", r.text("torch_dtype", ""));
    if (r.has("bos_token_id") && j["bos_token_id"].is_number_integer()) {
      c.bosTokenId = j["bos_token_id"].get<int64_t>();
    }
    return c;
  };
  if (c.architecture == "GPT2LMHeadModel") {
    detail::readGpt2(r, c);
    return finish();
  }
  if (c.architecture == "GPTNeoXForCausalLM") {
    detail::readGptNeox(r, c);
    return finish();
  }
  const bool gemma = c.architecture == "Gemma2ForCausalLM" || c.architecture == "Gemma3ForCausalLM";
  const std::string act =
      gemma ? r.text("hidden_activation", r.text("hidden_act", "gelu_pytorch_tanh"))
            : r.text("hidden_act", "silu");
  const std::string expected = gemma ? "gelu_pytorch_tanh" : "silu";
  if (act != expected) {
    throw HfModelError(where + ": activation '" + act + "' is not supported (" + c.architecture +
                       " is read with " + expected + ")");
  }
  auto& m = c.model;
  m.dModel = static_cast<int>(r.integer("hidden_size", 1, 1 << 16));
  m.nLayers = static_cast<int>(r.integer("num_hidden_layers", 1, 1024));
  m.nHeads = static_cast<int>(r.integer("num_attention_heads", 1, 1024));
  m.nKvHeads = static_cast<int>(r.integer("num_key_value_heads", 1, m.nHeads, m.nHeads));
  if (m.nHeads % m.nKvHeads != 0) {
    throw HfModelError(where + ": " + std::to_string(m.nKvHeads) +
                       " key/value heads do not divide " + std::to_string(m.nHeads) + " heads");
  }
  if (r.has("head_dim")) {
    m.headDim = static_cast<int>(r.integer("head_dim", 2, 1024));
  } else if (m.dModel % m.nHeads != 0) {
    throw HfModelError(where + ": " + std::to_string(m.nHeads) + " heads do not divide width " +
                       std::to_string(m.dModel) + " and no head_dim is given");
  }
  if (m.headDimension() % 2 != 0) {
    throw HfModelError(where + ": head dimension " + std::to_string(m.headDimension()) +
                       " must be even for RoPE");
  }
  if (m.headDim == m.dModel / m.nHeads && m.dModel % m.nHeads == 0) m.headDim = 0;
  m.dFF = static_cast<int>(r.integer("intermediate_size", 1, 1 << 20));
  m.vocabSize = static_cast<int>(r.integer("vocab_size", 2, 1 << 24));
  c.maxPositions = r.integer("max_position_embeddings", 1, int64_t{1} << 24, 2048);
  m.seqLen = static_cast<int>(std::min<int64_t>(c.maxPositions, 1 << 20));
  m.norm = "rmsnorm";
  m.normEps = r.number("rms_norm_eps", 1e-6);
  readRope(r, m, c.maxPositions, r.raw("rope_parameters"), r.raw("rope_scaling"),
           r.number("rope_theta", 10000.0),
           {c.architecture == "Phi3ForCausalLM", 1.0});    // Phi-4-mini rotates 3/4 of a head
  m.tieEmbeddings = r.flag("tie_word_embeddings", gemma);  // the classes' defaults
  readFamily(r, c);
  return finish();
}

HfModelConfig readHfConfig(const std::string& dir) {
  const auto path = (std::filesystem::path(dir) / "config.json").string();
  std::ifstream in(path);
  if (!in)
    throw HfModelError("'" + dir + "' has no config.json (is it a Hugging Face model folder?)");
  std::stringstream ss;
  ss << in.rdbuf();
  return parseHfConfig(ss.str(), path);
}

}  // namespace depthlab::hf

// See hf_config.h.
#include "hf/hf_config.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace depthlab::hf {

namespace {

using json = nlohmann::json;

class Reader {
 public:
  Reader(const json& j, std::string where) : m_j(j), m_where(std::move(where)) {}

  bool has(const char* key) const { return m_j.contains(key) && !m_j[key].is_null(); }

  /// A whole number in [lo, hi]; `fallback` when absent (none: required).
  int64_t integer(const char* key, int64_t lo, int64_t hi,
                  std::optional<int64_t> fallback = std::nullopt) const {
    if (!has(key)) {
      if (fallback) return *fallback;
      throw HfModelError(m_where + ": '" + key + "' is missing");
    }
    const json& v = m_j[key];
    if (!v.is_number_integer()) {
      throw HfModelError(m_where + ": '" + key + "' must be a whole number (got " +
                         v.dump().substr(0, 40) + ")");
    }
    const int64_t x = v.get<int64_t>();
    if (x < lo || x > hi) {
      throw HfModelError(m_where + ": '" + key + "' = " + std::to_string(x) + " is outside [" +
                         std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    return x;
  }

  double number(const json& v, const std::string& key, double fallback) const {
    if (v.is_null()) return fallback;
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0) {
      throw HfModelError(m_where + ": '" + key + "' must be a positive number (got " +
                         v.dump().substr(0, 40) + ")");
    }
    return v.get<double>();
  }
  double number(const char* key, double fallback) const {
    return number(has(key) ? m_j[key] : json(), key, fallback);
  }

  bool flag(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!m_j[key].is_boolean()) throw HfModelError(m_where + ": '" + key + "' must be true or false");
    return m_j[key].get<bool>();
  }

  std::string text(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    if (!m_j[key].is_string()) throw HfModelError(m_where + ": '" + key + "' must be a string");
    return m_j[key].get<std::string>();
  }

  const json& raw(const char* key) const {
    static const json null;
    return has(key) ? m_j[key] : null;
  }
  const std::string& where() const { return m_where; }

 private:
  const json& m_j;
  std::string m_where;
};

std::string architectureOf(const Reader& r, const json& j) {
  if (r.has("architectures")) {
    const json& a = j["architectures"];
    if (!a.is_array() || a.empty() || !a[0].is_string()) {
      throw HfModelError(r.where() + ": 'architectures' must be a list of names");
    }
    const std::string name = a[0].get<std::string>();
    if (std::find(kSupportedArchitectures.begin(), kSupportedArchitectures.end(), name) ==
        kSupportedArchitectures.end()) {
      throw HfModelError(r.where() + ": architecture '" + name +
                         "' is not supported (supported: LlamaForCausalLM, MistralForCausalLM, "
                         "Qwen2ForCausalLM)");
    }
    return name;
  }
  const std::string type = r.text("model_type", "");
  if (type == "llama") return "LlamaForCausalLM";
  if (type == "mistral") return "MistralForCausalLM";
  if (type == "qwen2") return "Qwen2ForCausalLM";
  throw HfModelError(r.where() + ": model_type '" + type +
                     "' is not supported (supported: llama, mistral, qwen2)");
}

/// rope_theta and the rope type, from transformers 5's rope_parameters or 4's fields.
void readRope(const Reader& r, model::ModelConfig& m) {
  std::string type = "default";
  const json& params = r.raw("rope_parameters");
  const json& scaling = r.raw("rope_scaling");
  m.ropeBase = r.number("rope_theta", 10000.0);
  for (const json* p : {&params, &scaling}) {
    if (p->is_null()) continue;
    if (!p->is_object()) throw HfModelError(r.where() + ": rope settings must be an object");
    if (p->contains("rope_theta")) m.ropeBase = r.number((*p)["rope_theta"], "rope_theta", 10000.0);
    for (const char* key : {"rope_type", "type"}) {
      if (p->contains(key) && (*p)[key].is_string()) type = (*p)[key].get<std::string>();
    }
  }
  if (type != "default") {
    throw HfModelError(r.where() + ": rope scaling type '" + type +
                       "' is not supported (DepthLab implements the default RoPE only)");
  }
}

}  // namespace

HfModelConfig parseHfConfig(const std::string& text, const std::string& where) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw HfModelError(where + " is not a JSON object");
  Reader r(j, where);
  HfModelConfig c;
  c.architecture = architectureOf(r, j);
  const std::string act = r.text("hidden_act", "silu");
  if (act != "silu") {
    throw HfModelError(where + ": activation '" + act + "' is not supported (SwiGLU uses silu)");
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
  readRope(r, m);
  m.tieEmbeddings = r.flag("tie_word_embeddings", false);
  if (c.architecture == "Qwen2ForCausalLM") {
    m.qkvBias = true;
    if (r.flag("use_sliding_window", false)) {
      c.slidingWindow = r.integer("sliding_window", 1, int64_t{1} << 24, 4096);
    }
  } else {
    for (const char* key : {"attention_bias", "mlp_bias"}) {
      if (r.flag(key, false)) {
        throw HfModelError(where + ": '" + key + "' is true; DepthLab's Llama decoder has no " +
                           (std::string(key) == "mlp_bias" ? "MLP" : "output-projection") +
                           " biases");
      }
    }
    if (c.architecture == "MistralForCausalLM" && r.has("sliding_window")) {
      c.slidingWindow = r.integer("sliding_window", 1, int64_t{1} << 24);
    }
  }
  c.dtype = r.text("dtype", r.text("torch_dtype", ""));
  if (r.has("bos_token_id") && j["bos_token_id"].is_number_integer()) {
    c.bosTokenId = j["bos_token_id"].get<int64_t>();
  }
  return c;
}

HfModelConfig readHfConfig(const std::string& dir) {
  const auto path = (std::filesystem::path(dir) / "config.json").string();
  std::ifstream in(path);
  if (!in) throw HfModelError("'" + dir + "' has no config.json (is it a Hugging Face model folder?)");
  std::stringstream ss;
  ss << in.rdbuf();
  return parseHfConfig(ss.str(), path);
}

}  // namespace depthlab::hf

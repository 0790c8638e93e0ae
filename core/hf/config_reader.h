// The config.json reader the architecture parsers share (hf_config.cpp, hf_config_gpt.cpp):
// typed fields with messages naming the file and the field, and the rope settings reader.
// Internal to hf/; callers use hf_config.h.
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "hf/hf_config.h"

namespace depthlab::hf::detail {

using json = nlohmann::json;

class ConfigReader {
 public:
  ConfigReader(const json& j, std::string where) : m_j(j), m_where(std::move(where)) {}

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
    if (!m_j[key].is_boolean())
      throw HfModelError(m_where + ": '" + key + "' must be true or false");
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
  const json& json_() const { return m_j; }

 private:
  const json& m_j;
  std::string m_where;
};

/// How a family reads partial_rotary_factor: allowed (GPT-NeoX, Phi-3) or refused unless 1,
/// and its value when the config gives none (GPT-NeoX: rotary_pct, 0.25).
struct PartialRotary {
  bool allowed = false;
  double fallback = 1.0;
};

/// rope_theta, the rope type and its parameters and the partial rotary factor, from
/// transformers 5's rope_parameters or 4's rope_theta and rope_scaling; after the head
/// dimension and max_position_embeddings.
void readRope(const ConfigReader& r, model::ModelConfig& m, int64_t maxPositions,
              const json& params, const json& scaling, double theta, PartialRotary partial = {});

/// GPT2LMHeadModel's and GPTNeoXForCausalLM's configs (hf_config_gpt.cpp): everything after
/// the architecture (the dtype and BOS are read by the caller).
void readGpt2(const ConfigReader& r, HfModelConfig& c);
void readGptNeox(const ConfigReader& r, HfModelConfig& c);

}  // namespace depthlab::hf::detail

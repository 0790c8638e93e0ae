// Named experiment presets: the paper's LLaMA configs (vocab 32000, seq 256, the official
// scripts' batch/lr/steps/warm-up) and small CPU presets that finish in minutes on 2 cores.
// Also the closed-form parameter count used to label them. No torch here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "experiment/experiment_config.h"

namespace depthlab::experiment {

struct Preset {
  std::string name;
  std::string description;
  ExperimentConfig config;
};

const std::vector<Preset>& presets();
std::optional<ExperimentConfig> presetConfig(const std::string& name);
std::vector<std::string> presetNames();
/// The preset's config; ConfigError "unknown preset 'x' (known: tiny cpu-demo ...)" otherwise.
ExperimentConfig requirePreset(const std::string& name);

/// A config file layered onto a preset: the keys the file has win, every other value comes from
/// `preset` when not empty (unknown: ConfigError naming the known ones), else from the preset
/// the file names in its "preset" key when that is a known one, else from the defaults. A
/// partial file ({"model": {"nLayers": 12}}) changes only what it names.
ExperimentConfig loadConfigOverPreset(const std::string& path, const std::string& preset = "");

/// Parameters of the model: 2*V*d + L*(4d^2 + 3*d*d_ff + 2d) + d (untied, no biases), plus the
/// extras a scheme adds (sandwich norms, skipinit/layerscale scales, lns_learnable gates).
/// Computed in checked arithmetic: kParameterCountOverflow when the count passes 64 bits.
constexpr int64_t kParameterCountOverflow = INT64_MAX;
int64_t parameterCount(const ModelConfig& m, const std::string& scheme = "pre_ln",
                       const SchemeOptions& o = {});

}  // namespace depthlab::experiment

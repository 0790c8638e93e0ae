// See run_config.h.
#include "experiment/run_config.h"

#include <nlohmann/json.hpp>

namespace depthlab::experiment {

ExperimentConfig configOf(const store::RunInfo& run) {
  auto j = nlohmann::json::parse(run.configJson, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    throw ConfigError("run " + std::to_string(run.id) + " has a broken config (not a JSON object)");
  }
  try {
    return configFromJson(j);
  } catch (const std::exception& e) {
    throw ConfigError("run " + std::to_string(run.id) + " has a broken config: " + e.what());
  }
}

std::optional<ExperimentConfig> tryConfigOf(const store::RunInfo& run) {
  try {
    return configOf(run);
  } catch (const ConfigError&) {
    return std::nullopt;
  }
}

bool isImportedRun(const store::RunInfo& run) {
  const auto j = nlohmann::json::parse(run.configJson, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.contains("import");
}

}  // namespace depthlab::experiment

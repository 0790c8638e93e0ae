// libFuzzer target: an experiment config JSON, as `--config FILE` and a stored run's config
// are read. Any input must end in a config or a ConfigError, never a crash or a sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "experiment/experiment_config.h"
#include "experiment/presets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace depthlab::experiment;
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  try {
    ExperimentConfig c = configFromJson(j);
    requireValid(c);
    (void)toJson(c).dump();
    (void)parameterCount(c.model);
  } catch (const ConfigError&) {
  }
  return 0;
}

// See run_config.h.
#include "experiment/run_config.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>

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

RunOrigin originOf(const store::RunInfo& run) {
  const auto j = nlohmann::json::parse(run.configJson, nullptr, /*allow_exceptions=*/false);
  RunOrigin o;
  if (!j.is_object()) return o;
  o.imported = j.contains("import");
  o.series = o.imported && j.contains("series") && j["series"].is_object();
  o.watched = j.contains("watch");
  o.tensorBoard = j.contains("tensorboard");
  return o;
}

bool isImportedRun(const store::RunInfo& run) { return originOf(run).imported; }
bool isSeriesRun(const store::RunInfo& run) { return originOf(run).series; }
bool isSnapshotRun(const store::RunInfo& run) { return originOf(run).snapshot(); }
bool isWatchedRun(const store::RunInfo& run) { return originOf(run).watched; }
bool isTensorBoardRun(const store::RunInfo& run) { return originOf(run).tensorBoard; }

std::string notTrainableReason(const store::RunInfo& run) {
  const auto o = originOf(run);
  const std::string id = "run " + std::to_string(run.id);
  if (o.imported) return id + " is an imported model: the lab analyses it but does not train it";
  if (o.tensorBoard) {
    return id + " was read from TensorBoard event files: the lab holds its curves, not its model";
  }
  if (o.watched) {
    return id +
           " was watched in a Python training loop (depthlab.watch): that loop trains it, "
           "the lab only records it; run the loop again to continue";
  }
  return "";
}

namespace {

void makeAbsolute(std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty() || fs::path(path).is_absolute()) return;
  std::error_code ec;
  const fs::path abs = fs::absolute(path, ec);
  if (!ec) path = abs.lexically_normal().string();
}

}  // namespace

void makePathsAbsolute(ExperimentConfig& config) {
  makeAbsolute(config.data.corpus);
  auto& tok = config.data.tokenizer;
  if (tok.rfind("spm:", 0) == 0) {
    std::string model = tok.substr(4);
    const bool size =
        !model.empty() && std::all_of(model.begin(), model.end(),
                                      [](unsigned char ch) { return std::isdigit(ch) != 0; });
    if (!size) {
      makeAbsolute(model);
      tok = "spm:" + model;
    }
  }
}

}  // namespace depthlab::experiment

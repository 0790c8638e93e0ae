// See run_checkpoints.h.
#include "experiment/run_checkpoints.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

#include "util/paths.h"

namespace depthlab::experiment {

namespace fs = std::filesystem;

std::string runCheckpointDir(store::RunStore& store, int64_t runId, const std::string& base) {
  const fs::path root = base.empty() ? fs::path(util::dataDir()) / "checkpoints" : fs::path(base);
  return (root / store.storeId() / ("run-" + std::to_string(runId))).string();
}

train::CheckpointOwner ownerOf(store::RunStore& store, const store::RunInfo& run,
                               const store::CheckpointInfo& recorded) {
  train::CheckpointOwner o;
  o.runId = run.id;
  o.scheme = run.scheme;
  o.storeId = store.storeId();
  o.checksum = recorded.checksum;
  auto j = nlohmann::json::parse(run.configJson, nullptr, false);
  if (!j.is_discarded() && j.is_object()) o.configHash = train::modelConfigHash(j);
  return o;
}

VerifiedCheckpoint newestVerifiedCheckpoint(store::RunStore& store, const store::RunInfo& run,
                                            std::optional<int64_t> atOrBefore,
                                            const CheckpointLoader& load) {
  auto all = store.checkpoints(run.id);
  VerifiedCheckpoint v;
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (atOrBefore && it->step > *atOrBefore) continue;
    try {
      v.meta = train::checkCheckpointOwner(it->path, ownerOf(store, run, *it));
      if (load) v.meta = load(it->path);
      v.info = *it;
      return v;
    } catch (const std::exception& e) {
      v.skipped.push_back("step " + std::to_string(it->step) + ": " + e.what());
    }
  }
  std::string msg = "run " + std::to_string(run.id) + " has no usable checkpoint" +
                    (atOrBefore ? " at or before step " + std::to_string(*atOrBefore) : "");
  if (v.skipped.empty()) msg += " (none was written)";
  for (const auto& s : v.skipped) msg += "\n  skipped " + s;
  throw std::runtime_error(msg);
}

std::vector<int64_t> checkpointsToPrune(const std::vector<int64_t>& steps, int keepLast,
                                        std::optional<int64_t> best, std::optional<int64_t> final) {
  std::vector<int64_t> sorted = steps;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> out;
  const size_t keepFrom = sorted.size() > static_cast<size_t>(std::max(keepLast, 0))
                              ? sorted.size() - static_cast<size_t>(std::max(keepLast, 0))
                              : 0;
  for (size_t i = 0; i < keepFrom; ++i) {
    if ((best && sorted[i] == *best) || (final && sorted[i] == *final)) continue;
    out.push_back(sorted[i]);
  }
  return out;
}

int removeTemporaryFiles(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return 0;
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".tmp" && fs::remove(e.path(), ec)) ++n;
  }
  return n;
}

}  // namespace depthlab::experiment

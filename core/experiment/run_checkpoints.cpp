// See run_checkpoints.h.
#include "experiment/run_checkpoints.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <climits>
#include <filesystem>
#include <map>

#include "util/paths.h"

namespace depthlab::experiment {

namespace fs = std::filesystem;

std::string absoluteCheckpointBase(const std::string& given) {
  const fs::path root = given.empty() ? fs::path(util::dataDir()) / "checkpoints" : fs::path(given);
  std::error_code ec;
  fs::path abs = fs::absolute(root, ec);
  if (ec) abs = root;
  abs = abs.lexically_normal();
  if (abs.has_relative_path() && abs.filename().empty()) abs = abs.parent_path();  // "a/b/" -> "a/b"
  return abs.string();
}

std::string runCheckpointDir(store::RunStore& store, int64_t runId, const std::string& base) {
  return (fs::path(absoluteCheckpointBase(base)) / store.storeId() /
          ("run-" + std::to_string(runId))).string();
}

std::string recordedCheckpointBase(store::RunStore& store, const store::RunInfo& run) {
  if (!run.checkpointBase.empty()) return run.checkpointBase;
  const auto rows = store.checkpoints(run.id);
  if (rows.empty()) return "";
  const fs::path folder = fs::path(rows.back().path).parent_path();  // <base>/<store id>/run-<id>
  if (folder.filename() != "run-" + std::to_string(run.id) || !folder.is_absolute()) return "";
  return folder.parent_path().parent_path().string();
}

std::string resumeCheckpointBase(store::RunStore& store, const store::RunInfo& run,
                                 const std::string& given, std::string& note) {
  const std::string recorded = recordedCheckpointBase(store, run);
  const std::string base =
      !given.empty() ? absoluteCheckpointBase(given)
                     : (recorded.empty() ? absoluteCheckpointBase("") : recorded);
  if (!recorded.empty() && base != recorded) {
    note = "run " + std::to_string(run.id) + " writes its checkpoints under " + base +
           " from now on (--checkpoint-dir; until now under " + recorded + ")";
  }
  if (base != run.checkpointBase) store.setCheckpointBase(run.id, base);
  return base;
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

namespace {

struct Candidate {
  store::CheckpointInfo info;
  bool recorded = true;
};

// The rows of `run`, and with `scanBase` the files of its folder no row names; oldest first (a
// row before a file of the same step).
std::vector<Candidate> candidatesOf(store::RunStore& store, const store::RunInfo& run,
                                    const std::optional<std::string>& scanBase) {
  std::vector<Candidate> out;
  std::set<std::string> named;
  for (auto& row : store.checkpoints(run.id)) {
    named.insert(fs::path(row.path).lexically_normal().string());
    out.push_back({std::move(row), true});
  }
  if (scanBase) {
    for (const auto& [step, path] : checkpointFilesIn(runCheckpointDir(store, run.id, *scanBase))) {
      if (named.count(fs::path(path).lexically_normal().string())) continue;
      store::CheckpointInfo info;
      info.step = step;
      info.path = path;
      out.push_back({std::move(info), false});
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
    return a.info.step != b.info.step ? a.info.step < b.info.step : a.recorded && !b.recorded;
  });
  return out;
}

// checkCheckpointOwner for one candidate: a row may name a file of one of the database's former
// ids; a file no row names has no recorded checksum (loading verifies its own).
train::CheckpointMeta checkCandidate(store::RunStore& store, const store::RunInfo& run,
                                     Candidate& c, const std::vector<std::string>& formerIds) {
  auto owner = ownerOf(store, run, c.info);
  if (!formerIds.empty() && c.recorded) {
    try {
      const auto header = train::readCheckpointMeta(c.info.path);
      if (std::find(formerIds.begin(), formerIds.end(), header.storeId) != formerIds.end()) {
        owner.storeId = header.storeId;
      }
    } catch (const std::exception&) {  // checkCheckpointOwner says why
    }
  }
  auto meta = train::checkCheckpointOwner(c.info.path, owner);
  if (!c.recorded) {
    c.info.step = meta.step;
    c.info.checksum = meta.checksum;
    std::error_code ec;
    const auto written = fs::last_write_time(c.info.path, ec);
    if (!ec) {
      c.info.createdAt = std::chrono::duration<double>(
          std::chrono::system_clock::now().time_since_epoch() -
          (fs::file_time_type::clock::now() - written)).count();
    }
  }
  return meta;
}

}  // namespace

VerifiedCheckpoint newestVerifiedCheckpoint(store::RunStore& store, const store::RunInfo& run,
                                            std::optional<int64_t> atOrBefore,
                                            const CheckpointLoader& load,
                                            const std::optional<std::string>& scanBase) {
  auto all = candidatesOf(store, run, scanBase);
  const auto formerIds = store.formerStoreIds();
  VerifiedCheckpoint v;
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (atOrBefore && it->info.step > *atOrBefore) continue;
    try {
      v.meta = checkCandidate(store, run, *it, formerIds);
      if (load) v.meta = load(it->info.path);
      v.info = it->info;
      v.recorded = it->recorded;
      return v;
    } catch (const std::exception& e) {
      v.skipped.push_back("step " + std::to_string(it->info.step) + ": " + e.what());
    }
  }
  std::string msg = "run " + std::to_string(run.id) + " has no usable checkpoint" +
                    (atOrBefore ? " at or before step " + std::to_string(*atOrBefore) : "");
  if (v.skipped.empty()) msg += " (none was written)";
  for (const auto& s : v.skipped) msg += "\n  skipped " + s;
  throw std::runtime_error(msg);
}

std::string checkpointGapNote(store::RunStore& store, const store::RunInfo& run, int64_t step) {
  const auto rows = store.scalarSeries(run.id, "loss_train", step, INT64_MAX);
  if (rows.empty() || rows.back().step + 1 <= step) return "";
  const int64_t trained = rows.back().step + 1;  // loss_train at s: after s + 1 updates
  return "run " + std::to_string(run.id) + " trained " + std::to_string(trained) +
         " steps, but its newest usable checkpoint is step " + std::to_string(step) +
         ": the weights of steps " + std::to_string(step + 1) + "-" + std::to_string(trained) +
         " are not on disk";
}

bool anyCheckpointFile(store::RunStore& store, const store::RunInfo& run, const std::string& base) {
  std::error_code ec;
  for (const auto& row : store.checkpoints(run.id)) {
    if (fs::exists(row.path, ec)) return true;
  }
  return !checkpointFilesIn(runCheckpointDir(store, run.id, base)).empty();
}

std::vector<std::pair<int64_t, std::string>> checkpointFilesIn(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("step-", 0) != 0 || e.path().extension() != ".ckpt") continue;
    try {
      size_t used = 0;
      const int64_t step = std::stoll(name.substr(5), &used);
      if (name.substr(5 + used) == ".ckpt") out.emplace_back(step, e.path().string());
    } catch (const std::exception&) {
    }
  }
  return out;
}

std::vector<int64_t> pruneCheckpointFiles(const std::string& dir, int keepLast,
                                          std::optional<int64_t> best, std::optional<int64_t> final,
                                          const std::set<int64_t>& keep) {
  std::vector<int64_t> steps;
  std::map<int64_t, std::string> paths;
  for (auto& [step, path] : checkpointFilesIn(dir)) {
    steps.push_back(step);
    paths[step] = path;
  }
  std::vector<int64_t> removed;
  for (int64_t old : checkpointsToPrune(steps, keepLast, best, final)) {
    if (keep.count(old)) continue;
    std::error_code ec;
    fs::remove(paths[old], ec);
    removed.push_back(old);
  }
  return removed;
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

std::string setAsideInheritedFolder(const std::string& dir) {
  if (checkpointFilesIn(dir).empty()) return "";
  for (int n = 1;; ++n) {
    const std::string aside = dir + ".set-aside-" + std::to_string(n);
    std::error_code ec;
    if (fs::exists(aside, ec)) continue;
    fs::rename(dir, aside, ec);
    if (ec) {
      throw std::runtime_error("the new run's checkpoint folder " + dir +
                               " holds another run's checkpoints and could not be moved aside (" +
                               ec.message() + "); move it away, then train again");
    }
    return aside;
  }
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

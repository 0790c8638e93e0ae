// A run's checkpoints: where they live, which of them can be trusted, and which are kept.
// Files go to <base>/<database id>/run-<id>/step-<n>.ckpt (base: --checkpoint-dir, or the data
// folder's checkpoints/), so runs of different databases never share a folder. Loading takes
// the newest checkpoint whose file verifies (format, the checksum the store recorded, run id,
// scheme, database id, model config) and says which newer ones were skipped and why; files in
// the run's folder that no row names (written while the store was unwritable) are candidates
// too. Pruning keeps the last N, the best (lowest validation loss), the final one, and the
// newest one the store has recorded (so a store that stays unwritable never has its rows name
// only deleted files). The folder's claim by one database: experiment/checkpoint_folder.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "store/run_store.h"
#include "train/checkpoint.h"

namespace depthlab::experiment {

/// <base or dataDir()/checkpoints>/<store id>/run-<id>, absolute (a relative base is taken
/// from the working directory)
std::string runCheckpointDir(store::RunStore& store, int64_t runId, const std::string& base);

/// `given` as an absolute, normal path; "" gives the default, dataDir()/checkpoints.
std::string absoluteCheckpointBase(const std::string& given);

/// The base a stored run's checkpoints go under: the one recorded at its start, else (runs
/// from before it was recorded) the base of its newest recorded checkpoint, else "".
std::string recordedCheckpointBase(store::RunStore& store, const store::RunInfo& run);

/// The base a resumed run writes under: `given` (--checkpoint-dir) when set, else the run's
/// own (recordedCheckpointBase), else the default; absolute, and recorded as the run's from now
/// on. Returns it; `note` gets a line when it moved from the run's recorded base.
std::string resumeCheckpointBase(store::RunStore& store, const store::RunInfo& run,
                                 const std::string& given, std::string& note);

/// What a checkpoint of `run` must say about itself.
train::CheckpointOwner ownerOf(store::RunStore& store, const store::RunInfo& run,
                               const store::CheckpointInfo& recorded);

struct VerifiedCheckpoint {
  store::CheckpointInfo info;
  train::CheckpointMeta meta;
  std::vector<std::string> skipped;  // "step-500.ckpt: <why>", newest first
  bool recorded = true;  // false: a file of the run's folder that no row of the store names
};

/// Reads a checkpoint into the caller's model (and optimizer): train::loadCheckpoint bound to them.
using CheckpointLoader = std::function<train::CheckpointMeta(const std::string& path)>;

/// The newest checkpoint of `run` at or before `atOrBefore` that is the run's by its header and
/// stored checksum (no pass over its bytes) and, when `load` is given, that loads through it (a
/// file that fails, corrupt bytes included, is skipped and the next older one tried). Throws
/// std::runtime_error listing every candidate's reason when none does. With `scanBase`, the
/// files of the run's folder under it that no row names are candidates too (checked by their
/// header: run id, scheme, this database's id, model config). A row's file may name one of the
/// database's former ids (a copy's checkpoints from before it took its own).
VerifiedCheckpoint newestVerifiedCheckpoint(store::RunStore& store, const store::RunInfo& run,
                                            std::optional<int64_t> atOrBefore = std::nullopt,
                                            const CheckpointLoader& load = nullptr,
                                            const std::optional<std::string>& scanBase = std::nullopt);

/// What a reader of the checkpoint at `step` must be told: "" when it is the state the run
/// trained to; else that the run trained T steps and the weights after `step` are not on disk
/// (its last checkpoints could not be written, or were deleted).
std::string checkpointGapNote(store::RunStore& store, const store::RunInfo& run, int64_t step);

/// Whether any checkpoint file of `run` exists: one a row names, or one in its folder under `base`.
bool anyCheckpointFile(store::RunStore& store, const store::RunInfo& run, const std::string& base);

/// The step-<n>.ckpt files in `dir`: (step, path), in no particular order.
std::vector<std::pair<int64_t, std::string>> checkpointFilesIn(const std::string& dir);

/// Deletes the checkpoint files in `dir` that checkpointsToPrune names, except the steps in
/// `keep` (the one just written, the newest the store recorded). Returns the steps deleted.
std::vector<int64_t> pruneCheckpointFiles(const std::string& dir, int keepLast,
                                          std::optional<int64_t> best, std::optional<int64_t> final,
                                          const std::set<int64_t>& keep);

/// Steps whose checkpoints to delete: all but the last `keepLast`, `best` and `final`.
std::vector<int64_t> checkpointsToPrune(const std::vector<int64_t>& steps, int keepLast,
                                        std::optional<int64_t> best, std::optional<int64_t> final);

/// A new run's folder that already holds checkpoint files (a deleted run's, in a database from
/// before ids were never reused, or files copied there by hand) is renamed to
/// "<dir>.set-aside-<n>" so the new run never inherits, prunes or resumes from them. Returns the
/// new name, "" when the folder was absent or held no checkpoint. Throws when it cannot be moved.
std::string setAsideInheritedFolder(const std::string& dir);

/// Removes "*.tmp" leftovers of interrupted writes in `dir`; returns how many.
int removeTemporaryFiles(const std::string& dir);

}  // namespace depthlab::experiment

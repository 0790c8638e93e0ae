// The config a stored run was started with: its JSON (store::RunInfo::configJson) parsed in one
// place, for resume, analyze, the runs table, the dashboard, Compare and cloning. Does not
// validate the config beyond what configFromJson checks; does not touch the store.
#pragma once

#include <optional>
#include <string>

#include "experiment/experiment_config.h"
#include "store/store_types.h"

namespace depthlab::experiment {

/// The run's config. Throws ConfigError naming the run when its JSON is broken or describes
/// no valid config.
ExperimentConfig configOf(const store::RunInfo& run);
/// The same, or nullopt where configOf would throw (for views that show "unreadable").
std::optional<ExperimentConfig> tryConfigOf(const store::RunInfo& run);
/// Where a run comes from, read from its config JSON in one parse (the is* functions below each
/// parse it; a caller asking several questions asks this once).
struct RunOrigin {
  bool imported = false;     // "import": a Hugging Face model (one snapshot, or a series)
  bool series = false;       // "import" and "series": a checkpoint series
  bool watched = false;      // "watch": a user's Python loop
  bool tensorBoard = false;  // "tensorboard": read from event files
  bool snapshot() const { return imported && !series; }
};
RunOrigin originOf(const store::RunInfo& run);
/// Whether the run is an imported model (its config carries the "import" record that
/// hf::importHfModel writes): probed outside any training, its seed, learning rate and corpus
/// are defaults, not facts. Decided by the config, not by the "imported" tag a user can remove.
bool isImportedRun(const store::RunInfo& run);
/// Whether the run is a checkpoint series (an imported run whose config carries the "series"
/// record hf::importHfSeries writes): one model probed at each of its checkpoints' steps.
bool isSeriesRun(const store::RunInfo& run);
/// Whether the run is one snapshot of an imported model (imported, not a series): probed once,
/// its step 0 none of training's; views show it as profiles over its layers.
bool isSnapshotRun(const store::RunInfo& run);
/// Whether the run is a watched training loop (its config carries the "watch" record that
/// watch::WatchedRun writes): trained by the user's own code, never by the lab.
bool isWatchedRun(const store::RunInfo& run);
/// Whether the run was read from TensorBoard event files (its config carries the "tensorboard"
/// record experiment::importTensorBoard writes): trained elsewhere, its batch unknown.
bool isTensorBoardRun(const store::RunInfo& run);
/// Why the lab cannot train `run` further ("" when it can): an imported model or a watched loop.
std::string notTrainableReason(const store::RunInfo& run);
/// The config's file paths (data.corpus, a tokenizer model "spm:PATH") made absolute from the
/// working directory, so the run reads the same files when it is resumed from another one.
void makePathsAbsolute(ExperimentConfig& config);

}  // namespace depthlab::experiment

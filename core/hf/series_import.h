// A checkpoint series as one imported run over training (`depthlab-cli import-hf --series`):
// each checkpoint of a released series (Pythia's revisions, OLMo's stepN-tokensM branches, a
// Trainer's checkpoint-N folders, the lab's own export-hf output) analysed with the same probes on
// the same probe text, its rows stored at the checkpoint's step (tokens_seen where known), so the
// dashboard's over-training heatmaps, Compare and the figures read it like a trained run. One
// checkpoint in memory at a time. Running the same series again continues it: checkpoints already
// analysed are passed over, new ones are added. Not here: finding the checkpoints
// (checkpoint_series.h) and the probes themselves (model_analysis.h).
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "hf/checkpoint_series.h"
#include "hf/model_analysis.h"
#include "store/run_store.h"

namespace depthlab::hf {

struct SeriesOptions {
  std::vector<SeriesCheckpoint> checkpoints;  // findSeries
  std::string name;                           // run name; empty: the folder holding the checkpoints
  ModelAnalysisOptions analysis;  // probe text, sequences, length, families, device, threads
  /// Told after each checkpoint has been analysed and stored (the hub fetcher deletes it then).
  std::function<void(const SeriesCheckpoint&)> analyzed;
};

struct SeriesResult {
  int64_t runId = 0;
  bool continued = false;  // an earlier analysis of this series was continued
  std::vector<int64_t> analyzedSteps, alreadyDone;
  std::string tokensHow;
  double seconds = 0;
};

/// The run name a series gets when none is given: the folder the checkpoints sit in.
std::string defaultSeriesName(const std::vector<SeriesCheckpoint>& checkpoints);

/// The steps the series run named `name` holds analysed (empty when there is none).
std::set<int64_t> seriesStepsDone(store::RunStore& store, const std::string& name);

/// Analyses every checkpoint of `options.checkpoints` not analysed yet into the series run named
/// `options.name` (created when there is none). Checks first, writing nothing when it fails, that
/// every checkpoint has one architecture and shape and, when continuing, that the probe setup is
/// the earlier one's. A checkpoint that fails later stops the series (the run reads stopped, its
/// earlier checkpoints kept) with HfModelError naming it. Throws HfModelError / StoreError.
SeriesResult importHfSeries(store::RunStore& store, const SeriesOptions& options);

}  // namespace depthlab::hf

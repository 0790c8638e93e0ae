// Analysing a stored checkpoint after the fact (`depthlab-cli analyze`): rebuilds the run's
// model from its stored config, loads the checkpoint at (or before) a step, runs the chosen
// probe families on the run's probe batch and writes the rows to the store at that step.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "store/run_store.h"

namespace depthlab::experiment {

/// The on-demand probe family that trains a tuned lens (experiment/tuned_lens_run.h).
inline constexpr char kTunedLensFamily[] = "tuned_lens";

struct AnalyzeResult {
  int64_t step = 0;
  std::string checkpointPath;
  double seconds = 0;
  size_t valuesWritten = 0;
  std::vector<std::string> skipped;  // newer checkpoints passed over: "step N: why"
  std::string gapNote;               // checkpointGapNote: the run trained past this step
};

/// `which`: names from kProbeNames (parseProbeList turns "all" into every family) and
/// "tuned_lens" (experiment/tuned_lens_run.h: trained for `tunedLensSteps` on the run's
/// validation batches, kept beside the checkpoint).
AnalyzeResult analyzeCheckpoint(store::RunStore& store, int64_t runId, std::optional<int64_t> step,
                                std::set<std::string> which, int tunedLensSteps = 250);
/// Parses "all" or "variance,angular,..." and rejects unknown names (listing the known ones).
std::set<std::string> parseProbeList(const std::string& list);

}  // namespace depthlab::experiment

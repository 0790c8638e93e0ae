// RunReport: the Curse-of-Depth summary of one stored run, computed from the run store's
// latest probe rows (no torch): final validation loss / perplexity, last-layer and mean
// output variance, the slope of log-variance against depth, the deeper half's mean adjacent
// angular distance, lazy layers, and single-layer pruning deltas deeper vs shallower half.
#pragma once

#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/run_store.h"

namespace depthlab::experiment {

struct RunReport {
  int64_t runId = 0;
  std::string name, scheme, status;
  int64_t steps = 0;  // updates trained (by the report's step)
  std::optional<double> lossVal, pplVal;
  std::optional<int64_t> probeStep;       // step of the variance / angular rows used
  std::optional<double> varianceLast, varianceMean, logVarianceSlope;
  std::optional<double> angularDeepMean;  // mean adjacent distance over layers >= L/2
  std::optional<int> lazyLayers;
  std::optional<double> pruneDeepMean, pruneShallowMean;
  int nLayers = 0;
  std::vector<std::string> missing;       // metrics the run does not have
};

/// The run's summary after `atStep` updates (its last validation and probe rows at or before
/// that step; default: its last).
RunReport makeRunReport(store::RunStore& store, int64_t runId, int64_t atStep = INT64_MAX);
/// The step a side-by-side view of `runIds` shows every trained run at when they were planned
/// for different lengths (one trained further, runs of different experiments): the fewest
/// steps any was planned for, so they are compared at one point; nullopt when the plans agree
/// (a diverged, stopped or running run keeps its last numbers: comparing every run at the step
/// one diverged would hide the others' results; imported models do not count).
std::optional<int64_t> fewestPlannedSteps(store::RunStore& store,
                                          const std::vector<int64_t>& runIds);
/// The last row of per-layer `metric` at or before `atStep` (its step and its L values), found
/// by one indexed seek; nullopt when the run has none.
std::optional<std::pair<int64_t, std::vector<float>>> lastLayerRow(store::RunStore& store,
                                                                   int64_t run,
                                                                   const std::string& metric,
                                                                   int64_t atStep = INT64_MAX);
/// Least-squares slope of y against x = 1..n.
double slopeAgainstIndex(const std::vector<double>& y);

}  // namespace depthlab::experiment

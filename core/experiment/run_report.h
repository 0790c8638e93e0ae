// RunReport: the Curse-of-Depth summary of one stored run, computed from the run store's
// latest rows (no torch). Which metrics it holds comes from the metric catalogue: every metric
// marked metrics::kReport, with the catalogue's label and unit: a scalar as its last value, a
// per-layer metric as summaries over depth (output variance: last layer, mean, log-slope;
// adjacent angular distance: deep-half mean; pruning delta: deep and shallow half; any other:
// the mean over layers).
#pragma once

#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/run_store.h"

namespace depthlab::experiment {

/// One number of the report: a metric the catalogue marks kReport, or a summary of one.
struct ReportValue {
  enum class Format { General, Slope, LayerCount };  // "%.4g", "%.4f", "lazy/L"
  std::string key;     // its --json name: the metric's key, or one for the summary
  std::string metric;  // the catalogue key it comes from
  std::string label;   // the catalogue's label, and for a summary what of it ("..., last layer")
  std::string unit;    // the catalogue's unit ("" when dimensionless)
  Format format = Format::General;
  std::optional<double> value;  // nullopt: the run does not have the metric
};

struct RunReport {
  int64_t runId = 0;
  std::string name, scheme, status;
  int64_t steps = 0;                 // updates trained (by the report's step)
  std::optional<double> lossVal;     // last validation loss (read whatever the report shows)
  std::optional<int64_t> probeStep;  // step of the per-layer rows used
  int nLayers = 0;
  std::vector<ReportValue> values;    // the kReport metrics in catalogue order, scalars first
  std::vector<std::string> missing;   // metrics the run does not have and could be measured
  std::vector<std::string> warnings;  // what its numbers contradict (a declared scheme's scale)
  bool watched = false;               // a watched Python loop (the lab cannot analyse it again)
  bool fromTensorBoard = false;       // read from event files (no model to analyse)
  /// The value named `key` (ReportValue::key); nullptr when the report has none.
  const ReportValue* find(const std::string& key) const;
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
/// The same from runs read before (their configs; the figures' runs).
std::optional<int64_t> fewestPlannedSteps(const std::vector<store::RunInfo>& runs);
/// The last row of per-layer `metric` at or before `atStep` (its step and its L values), found
/// by one indexed seek; nullopt when the run has none.
std::optional<std::pair<int64_t, std::vector<float>>> lastLayerRow(store::RunStore& store,
                                                                   int64_t run,
                                                                   const std::string& metric,
                                                                   int64_t atStep = INT64_MAX);
/// Least-squares slope of y against x = 1..n.
double slopeAgainstIndex(const std::vector<double>& y);

}  // namespace depthlab::experiment

// Layer diagnosis: which layers of a trained run could be dropped, and which cheap proxy says
// so reliably. For one run at one step it puts side by side, per layer, the proxies (adjacent
// angular distance d(x_l, x_l+1), Block Influence, effectiveness E_l; small = the block changes
// little) and the measured single-layer pruning loss increase, ranks the layers by each (rank 1
// = the most droppable), and gives each proxy's Spearman rank correlation with the measured
// pruning (1 = the proxy orders the layers exactly as removing them does). Reads the store;
// no torch.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/run_store.h"

namespace depthlab::analysis {

/// Average ranks (1-based, ties share the mean of their ranks), ascending; NaN ranks NaN.
std::vector<double> ranks(const std::vector<double>& x);
/// Spearman's rank correlation over the pairs where both are finite; nullopt with fewer than
/// 3 pairs or a constant side.
std::optional<double> spearman(const std::vector<double>& a, const std::vector<double>& b);

struct ProxyColumn {
  std::string key;    // metric-catalogue key
  std::string label;  // "adjacent angular distance"
  std::vector<double> values, ranks;       // (L) NaN where not measured
  std::optional<double> spearmanVsPruning;  // against the measured pruning delta
};

struct LayerDiagnosis {
  int64_t runId = 0;
  int64_t step = -1;         // the pruning measurement used (-1: none)
  int layers = 0;
  std::vector<double> pruning, pruningRanks;  // (L) measured loss increase and its ranks
  std::vector<double> pruningError;  // (L) its standard error over the probe sequences (NaN: none)
  /// Whether layer l's (0-based) delta lies within two standard errors of 0: removing it changes
  /// the loss by less than the probe set can resolve, so such layers' order is noise.
  bool withinNoise(int l) const;
  /// How many layers are withinNoise.
  int withinNoiseCount() const;
  std::vector<ProxyColumn> proxies;           // angular, Block Influence, effectiveness
  /// Layers ordered by measured pruning delta, most droppable first (0-based).
  std::vector<int> dropOrder;
};

/// The diagnosis at the newest step (<= `atStep` when given) with a pruning measurement; the
/// proxies are taken at the last step <= that one. `step` stays -1 when the run has no pruning.
LayerDiagnosis diagnoseLayers(store::RunStore& store, int64_t runId,
                              std::optional<int64_t> atStep = std::nullopt);
/// The same from series already loaded (keys: the catalogue's prune_delta, prune_delta_se,
/// angular_adjacent, block_influence, effectiveness; missing ones count as not measured).
LayerDiagnosis diagnoseLayers(const std::map<std::string, store::LayerSeries>& layers,
                              std::optional<int64_t> atStep = std::nullopt);
/// The metric keys diagnoseLayers reads.
const std::vector<std::string>& diagnosisMetrics();

}  // namespace depthlab::analysis

// Lazy layers: which of a run's layers its effectiveness E_l calls lazy, low or effective, by
// the thresholds of that run's own config (probes.lazyThreshold, probes.lowThreshold). The
// probes store the counts as they measure E_l (what `depthlab-cli report` reads); the
// dashboard counts again at the step its cursor shows. Both call classifyLayers here, with
// the run's thresholds, so the two always agree. Plain C++, no torch.
#pragma once

#include <vector>

#include "probes/probe_config.h"

namespace depthlab::probes {

/// E_l below `lazy`: lazy; below `low`: low; at or above: effective.
struct LayerThresholds {
  double lazy = 0.05, low = 0.2;
  bool operator==(const LayerThresholds& o) const { return lazy == o.lazy && low == o.low; }
};

/// The thresholds a run's probe config sets.
LayerThresholds layerThresholds(const probes::ProbeConfig& config);

struct LazyCounts {
  int lazy = 0, low = 0, effective = 0;
};

/// Counts the layers of `effectiveness` (one E_l per layer) in each class; NaN (not measured)
/// counts in none.
LazyCounts classifyLayers(const std::vector<float>& effectiveness, const LayerThresholds& t);

}  // namespace depthlab::probes

// Lazy-layer counts by a run's own thresholds; see lazy_layers.h.
#include "probes/lazy_layers.h"

#include <cmath>

namespace depthlab::probes {

LayerThresholds layerThresholds(const probes::ProbeConfig& config) {
  return {config.lazyThreshold, config.lowThreshold};
}

LazyCounts classifyLayers(const std::vector<float>& effectiveness, const LayerThresholds& t) {
  LazyCounts c;
  for (float v : effectiveness) {
    if (std::isnan(v)) continue;
    if (v < t.lazy)
      ++c.lazy;
    else if (v < t.low)
      ++c.low;
    else
      ++c.effective;
  }
  return c;
}

}  // namespace depthlab::probes

// What Compare draws per layer: the per-layer profiles (from the metric catalogue's Compare
// rows) and their titles. Runs of one scheme are told apart by shades of its colour, the rule
// of every view (dashboard::runShade).
// Shared by compare_view.cpp (layout) and compare_view_draw.cpp (drawing). No widgets.
#pragma once

#include <QString>
#include <Qt>

#include <string>
#include <vector>

#include "store/metric_catalogue.h"

namespace depthlab::ui::compare {

/// Step columns of the variance heatmaps and of the difference map: as many rows of each run's
/// variance are loaded (RunStore::layerSeriesSampled).
constexpr int kHeatmapColumns = 400;

/// The EMA weight of Compare's train loss curves (the hover reads the same smoothed values).
constexpr double kLossSmoothing = 0.9;

/// The per-layer metrics Compare shows as "final value per layer" profiles.
inline const std::vector<std::string>& profiles() {
  static const auto keys = metrics::keysFor(metrics::Kind::PerLayer, metrics::kCompare);
  return keys;
}

/// "final output variance": the catalogue's label of `key`.
inline QString profileTitle(const std::string& key) {
  const auto& m = metrics::require(key, metrics::Kind::PerLayer);
  return QStringLiteral("final %1")
      .arg(QString::fromUtf8(m.label.data(), static_cast<int>(m.label.size())));
}

}  // namespace depthlab::ui::compare

// See variance_difference.h.
#include "compare/variance_difference.h"

#include <algorithm>
#include <cstddef>

#include "analysis/statistics.h"
#include "plot/plot_helpers.h"

namespace depthlab::ui::compare {

VarianceDifference varianceDifference(const store::LayerSeries& a, const store::LayerSeries& b,
                                      bool relative, bool snapshot, int maxColumns) {
  VarianceDifference out;
  out.rows = relative ? std::max(a.nLayers, b.nLayers) : a.nLayers;
  const int64_t first = snapshot ? 0 : std::max(a.steps.front(), b.steps.front());
  const int64_t last = snapshot ? 0 : std::min(a.steps.back(), b.steps.back());
  if (first > last) {
    out.shareSteps = false;
    return out;
  }
  out.firstStep = static_cast<double>(first);
  out.lastStep = static_cast<double>(last);
  auto rowsWithin = [&](const std::vector<int64_t>& s) {
    return std::upper_bound(s.begin(), s.end(), last) - std::lower_bound(s.begin(), s.end(), first);
  };
  out.columns = snapshot ? 1
                         : static_cast<int>(std::max<ptrdiff_t>(
                               1, std::min<ptrdiff_t>({rowsWithin(a.steps), rowsWithin(b.steps), maxColumns})));
  std::vector<std::pair<size_t, size_t>> rowsOf;  // (columns) the row of A and of B it shows
  if (snapshot) rowsOf.emplace_back(a.steps.size() - 1, b.steps.size() - 1);
  for (int c = 0; c < out.columns && !snapshot; ++c) {
    const double x = out.columns > 1 ? out.firstStep + (out.lastStep - out.firstStep) * c / (out.columns - 1)
                                     : out.firstStep;
    rowsOf.emplace_back(nearestStepIndex(a.steps, x), nearestStepIndex(b.steps, x));
  }
  auto row = [](const store::LayerSeries& s, size_t k) {  // (L) row k's values
    const auto* v = s.values.data() + k * static_cast<size_t>(s.nLayers);
    return std::vector<double>(v, v + s.nLayers);
  };
  out.cells.reserve(rowsOf.size() * static_cast<size_t>(out.rows));
  for (const auto& [ka, kb] : rowsOf) {
    std::vector<double> pa = row(a, ka), pb = row(b, kb);
    if (relative) {
      pa = analysis::toRelativeDepth(pa, out.rows);
      pb = analysis::toRelativeDepth(pb, out.rows);
    }
    for (int l = 0; l < out.rows; ++l) out.cells.push_back(pb[static_cast<size_t>(l)] - pa[static_cast<size_t>(l)]);
  }
  return out;
}

}  // namespace depthlab::ui::compare

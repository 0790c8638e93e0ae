// The numbers of Compare's difference map: per-layer variance of run B minus run A, in columns
// evenly spaced over the steps both runs span (or one column of each run's latest probe when
// either is an imported model), by layer or by relative depth. No drawing, no widgets: the map
// and its colour bar are drawn by CompareView::drawDifference.
#pragma once

#include <cstdint>
#include <vector>

#include "store/run_store.h"

namespace depthlab::ui::compare {

struct VarianceDifference {
  bool shareSteps = true;    // false: the runs' probed steps do not overlap (nothing below)
  int columns = 0, rows = 0;
  double firstStep = 0, lastStep = 0;  // the columns' span (0, 0 for a snapshot)
  std::vector<double> cells;  // (columns x rows) B - A, column-major: cells[c * rows + l]
};

/// B minus A of the variance series `a` and `b` (both non-empty). `relative`: resampled onto
/// max(L_a, L_b) relative-depth bins; `snapshot`: one column, each run's last row. Otherwise as
/// many columns as the fewer rows either run has in the shared span (at most `maxColumns`), each
/// B's row nearest its centre minus A's, as the heatmaps pick theirs.
VarianceDifference varianceDifference(const store::LayerSeries& a, const store::LayerSeries& b,
                                      bool relative, bool snapshot, int maxColumns);

}  // namespace depthlab::ui::compare

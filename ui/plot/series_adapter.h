// The one place that turns run-store series into QCustomPlot data (PlotJuggler's
// timeseries_qwt.h role), with min/max decimation per pixel column so spikes survive.
// Panels call these functions; they never touch SQL.
#pragma once

#include <QVector>

#include <vector>

#include "store/store_types.h"

class QCPGraph;

namespace depthlab::ui {

struct DecimatedSeries {
  QVector<double> keys, values;
  int sourcePoints = 0;   // M in "N of M points"
  bool decimated() const { return keys.size() < sourcePoints; }
};

/// Keeps every point when there are at most 2*columns; otherwise the min and the max of
/// each pixel column, in x order (so no spike is dropped).
DecimatedSeries decimateMinMax(const std::vector<store::ScalarPoint>& points, double xFrom,
                               double xTo, int columns);
/// The same over already decimated points (an overview, below): min/max of min/max keeps
/// every column's extent.
DecimatedSeries decimateMinMax(const DecimatedSeries& series, double xFrom, double xTo, int columns);
/// Every layer of `s` as its own curve, min/max-decimated over all its steps to `columns`
/// columns in one pass over the (step-major) values. The loader builds these off the GUI
/// thread; an unzoomed curves panel re-decimates them to its width (layerCurves).
std::vector<DecimatedSeries> layerOverview(const store::LayerSeries& s, int columns);
/// The overview's resolution: wider than any panel, so re-decimating it to a panel's width is
/// what decimating the full series would give, up to a column's edge.
inline constexpr int kOverviewColumns = 2048;
void setGraphData(QCPGraph* graph, const DecimatedSeries& series);

}  // namespace depthlab::ui

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
void setGraphData(QCPGraph* graph, const DecimatedSeries& series);

}  // namespace depthlab::ui

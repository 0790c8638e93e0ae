// Store series -> QCustomPlot data; see series_adapter.h.
#include "plot/series_adapter.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace depthlab::ui {

DecimatedSeries decimateMinMax(const std::vector<store::ScalarPoint>& points, double xFrom,
                               double xTo, int columns) {
  DecimatedSeries out;
  out.sourcePoints = static_cast<int>(points.size());
  columns = std::max(columns, 1);
  if (static_cast<int>(points.size()) <= 2 * columns || !(xTo > xFrom)) {
    out.keys.reserve(static_cast<int>(points.size()));
    out.values.reserve(static_cast<int>(points.size()));
    for (const auto& p : points) {
      out.keys.push_back(static_cast<double>(p.step));
      out.values.push_back(p.value);
    }
    return out;
  }
  const double width = (xTo - xFrom) / columns;
  size_t i = 0;
  while (i < points.size()) {
    const double x = static_cast<double>(points[i].step);
    if (x < xFrom || x > xTo) {  // outside the view: keep as-is so panning has neighbours
      out.keys.push_back(x);
      out.values.push_back(points[i].value);
      ++i;
      continue;
    }
    const auto col = static_cast<long>(std::floor((x - xFrom) / width));
    size_t j = i, minI = i, maxI = i;
    while (j < points.size()) {
      const double xj = static_cast<double>(points[j].step);
      if (xj > xTo || static_cast<long>(std::floor((xj - xFrom) / width)) != col) break;
      if (points[j].value < points[minI].value) minI = j;
      if (points[j].value > points[maxI].value) maxI = j;
      ++j;
    }
    // Min and max of the column, in x order: the column's full vertical extent (spikes kept),
    // two points per pixel column.
    size_t picks[2] = {std::min(minI, maxI), std::max(minI, maxI)};
    size_t last = SIZE_MAX;
    for (size_t p : picks) {
      if (p == last) continue;
      out.keys.push_back(static_cast<double>(points[p].step));
      out.values.push_back(points[p].value);
      last = p;
    }
    i = j;
  }
  return out;
}

void setGraphData(QCPGraph* graph, const DecimatedSeries& series) {
  graph->setData(series.keys, series.values, /*alreadySorted=*/true);
}

}  // namespace depthlab::ui

// Store series -> QCustomPlot data; see series_adapter.h.
#include "plot/series_adapter.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace depthlab::ui {

namespace {

// Min/max decimation over any indexed points (x ascending): the one body behind both overloads.
template <typename KeyAt, typename ValueAt>
DecimatedSeries decimate(size_t n, const KeyAt& keyAt, const ValueAt& valueAt, int sourcePoints,
                         double xFrom, double xTo, int columns) {
  DecimatedSeries out;
  out.sourcePoints = sourcePoints;
  columns = std::max(columns, 1);
  if (n <= 2 * static_cast<size_t>(columns) || !(xTo > xFrom)) {
    out.keys.reserve(static_cast<int>(n));
    out.values.reserve(static_cast<int>(n));
    for (size_t i = 0; i < n; ++i) {
      out.keys.push_back(keyAt(i));
      out.values.push_back(valueAt(i));
    }
    return out;
  }
  out.keys.reserve(2 * columns + 8);
  out.values.reserve(2 * columns + 8);
  const double width = (xTo - xFrom) / columns;
  size_t i = 0;
  while (i < n) {
    const double x = keyAt(i);
    if (x < xFrom || x > xTo) {  // outside the view: keep as-is so panning has neighbours
      out.keys.push_back(x);
      out.values.push_back(valueAt(i));
      ++i;
      continue;
    }
    const auto col = static_cast<long>(std::floor((x - xFrom) / width));
    size_t j = i, minI = i, maxI = i;
    double minV = valueAt(i), maxV = minV;
    while (j < n) {
      const double xj = keyAt(j);
      if (xj > xTo || static_cast<long>(std::floor((xj - xFrom) / width)) != col) break;
      const double v = valueAt(j);
      if (v < minV) minV = v, minI = j;
      if (v > maxV) maxV = v, maxI = j;
      ++j;
    }
    // Min and max of the column, in x order: the column's full vertical extent (spikes kept),
    // two points per pixel column.
    size_t picks[2] = {std::min(minI, maxI), std::max(minI, maxI)};
    size_t last = SIZE_MAX;
    for (size_t p : picks) {
      if (p == last) continue;
      out.keys.push_back(keyAt(p));
      out.values.push_back(valueAt(p));
      last = p;
    }
    i = j;
  }
  return out;
}

}  // namespace

DecimatedSeries decimateMinMax(const std::vector<store::ScalarPoint>& points, double xFrom,
                               double xTo, int columns) {
  return decimate(
      points.size(), [&](size_t i) { return static_cast<double>(points[i].step); },
      [&](size_t i) { return static_cast<double>(points[i].value); }, static_cast<int>(points.size()), xFrom,
      xTo, columns);
}

DecimatedSeries decimateMinMax(const DecimatedSeries& series, double xFrom, double xTo, int columns) {
  return decimate(
      static_cast<size_t>(series.keys.size()), [&](size_t i) { return series.keys[static_cast<int>(i)]; },
      [&](size_t i) { return series.values[static_cast<int>(i)]; }, series.sourcePoints, xFrom, xTo, columns);
}

std::vector<DecimatedSeries> layerOverview(const store::LayerSeries& s, int columns) {
  std::vector<DecimatedSeries> out(static_cast<size_t>(std::max(0, s.nLayers)));
  if (s.steps.empty() || s.nLayers <= 0) return out;
  const size_t L = static_cast<size_t>(s.nLayers);
  const size_t n = s.steps.size();
  auto valueAt = [&](size_t i, size_t l) { return static_cast<double>(s.values[i * L + l]); };
  if (n <= 2 * static_cast<size_t>(std::max(columns, 1))) {
    for (size_t l = 0; l < L; ++l) {
      out[l] = decimate(
          n, [&](size_t i) { return static_cast<double>(s.steps[i]); }, [&](size_t i) { return valueAt(i, l); },
          static_cast<int>(n), 0, 0, columns);
    }
    return out;
  }
  // One pass over the steps, every layer's column at once: the values are stored step by step
  // (L floats a step), so reading them layer by layer strides through the whole series L times.
  const double from = static_cast<double>(s.steps.front()), to = static_cast<double>(s.steps.back());
  const double width = (to - from) / columns;
  std::vector<size_t> minI(L), maxI(L);
  auto flush = [&] {
    for (size_t l = 0; l < L; ++l) {
      const size_t a = std::min(minI[l], maxI[l]), b = std::max(minI[l], maxI[l]);
      out[l].keys.push_back(static_cast<double>(s.steps[a]));
      out[l].values.push_back(valueAt(a, l));
      if (b != a) {
        out[l].keys.push_back(static_cast<double>(s.steps[b]));
        out[l].values.push_back(valueAt(b, l));
      }
    }
  };
  for (auto& d : out) {
    d.sourcePoints = static_cast<int>(n);
    d.keys.reserve(2 * columns + 2);
    d.values.reserve(2 * columns + 2);
  }
  long col = -1;
  for (size_t i = 0; i < n; ++i) {
    const long c = static_cast<long>(std::floor((static_cast<double>(s.steps[i]) - from) / width));
    if (c != col) {
      if (col >= 0) flush();
      col = c;
      std::fill(minI.begin(), minI.end(), i);
      std::fill(maxI.begin(), maxI.end(), i);
      continue;
    }
    const float* row = &s.values[i * L];
    for (size_t l = 0; l < L; ++l) {
      if (row[l] < s.values[minI[l] * L + l]) minI[l] = i;
      if (row[l] > s.values[maxI[l] * L + l]) maxI[l] = i;
    }
  }
  flush();
  return out;
}

void setGraphData(QCPGraph* graph, const DecimatedSeries& series) {
  graph->setData(series.keys, series.values, /*alreadySorted=*/true);
}

}  // namespace depthlab::ui

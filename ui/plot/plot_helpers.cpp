// See plot_helpers.h.
#include "plot/plot_helpers.h"

#include <qcustomplot.h>

#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <limits>

namespace depthlab::ui {

namespace {
const char* kZoomed = "depthlabUserZoomed";

QString tooltipFor(QCustomPlot* plot, const QPoint& pos) {
  for (int i = 0; i < plot->plottableCount(); ++i) {
    if (auto* map = qobject_cast<QCPColorMap*>(plot->plottable(i))) {
      double x = map->keyAxis()->pixelToCoord(pos.x()), y = map->valueAxis()->pixelToCoord(pos.y());
      int kx, ky;
      map->data()->coordToCell(x, y, &kx, &ky);
      if (kx < 0 || ky < 0 || kx >= map->data()->keySize() || ky >= map->data()->valueSize()) continue;
      double v = map->data()->cell(kx, ky);
      if (std::isnan(v)) continue;
      double cx, cy;
      map->data()->cellToCoord(kx, ky, &cx, &cy);
      return QStringLiteral("%1 = %2, %3 = %4\nvalue %5")
          .arg(map->keyAxis()->label()).arg(cx, 0, 'g', 6)
          .arg(map->valueAxis()->label()).arg(cy, 0, 'g', 4).arg(v, 0, 'g', 6);
    }
  }
  QString best;
  double bestDist = 12;  // pixels
  for (int i = 0; i < plot->graphCount(); ++i) {
    auto* g = plot->graph(i);
    if (!g->visible() || g->dataCount() == 0) continue;
    double x = g->keyAxis()->pixelToCoord(pos.x());
    auto it = g->data()->findBegin(x, true);
    for (int k = 0; k < 2 && it != g->data()->constEnd(); ++k, ++it) {
      double px = g->keyAxis()->coordToPixel(it->key), py = g->valueAxis()->coordToPixel(it->value);
      double d = std::hypot(px - pos.x(), py - pos.y());
      if (d < bestDist) {
        bestDist = d;
        best = QStringLiteral("%1\n%2 = %3, %4 = %5")
                   .arg(g->name(), g->keyAxis()->label()).arg(it->key, 0, 'g', 8)
                   .arg(g->valueAxis()->label().isEmpty() ? QStringLiteral("value") : g->valueAxis()->label())
                   .arg(it->value, 0, 'g', 6);
      }
    }
  }
  for (int i = 0; i < plot->plottableCount() && best.isEmpty(); ++i) {
    if (auto* bars = qobject_cast<QCPBars*>(plot->plottable(i))) {
      double x = bars->keyAxis()->pixelToCoord(pos.x());
      auto it = bars->data()->findBegin(x - 0.5, true);
      if (it != bars->data()->constEnd() && std::abs(it->key - x) <= 0.5) {
        best = QStringLiteral("%1 layer %2: %3").arg(bars->name()).arg(it->key).arg(it->value, 0, 'g', 6);
      }
    }
  }
  return best;
}
}  // namespace

void makeInteractive(QCustomPlot* plot) {
  plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot->setProperty(kZoomed, false);
  plot->setMouseTracking(true);
  QObject::connect(plot, &QCustomPlot::mouseWheel, plot, [plot](QWheelEvent*) { plot->setProperty(kZoomed, true); });
  QObject::connect(plot, &QCustomPlot::mousePress, plot, [plot](QMouseEvent*) { plot->setProperty(kZoomed, true); });
  QObject::connect(plot, &QCustomPlot::mouseDoubleClick, plot, [plot](QMouseEvent*) { resetZoom(plot); });
  QObject::connect(plot, &QCustomPlot::mouseMove, plot, [plot](QMouseEvent* e) {
    const QString text = tooltipFor(plot, e->pos());
    if (text.isEmpty()) QToolTip::hideText();
    else QToolTip::showText(e->globalPosition().toPoint(), text, plot);
  });
}

bool userZoomed(const QCustomPlot* plot) { return plot->property(kZoomed).toBool(); }

void resetZoom(QCustomPlot* plot) {
  plot->setProperty(kZoomed, false);
  plot->rescaleAxes();
  plot->replot(QCustomPlot::rpQueuedReplot);
}

std::pair<double, double> fillLayerHeatmap(QCPColorMap* map, const store::LayerSeries& s,
                                           int maxColumns) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  const int L = s.nLayers;
  const int n = static_cast<int>(s.steps.size());
  if (n == 0 || L == 0) {
    map->data()->clear();
    return {0, 1};
  }
  const int cols = std::max(1, std::min(n, maxColumns));
  const double x0 = static_cast<double>(s.steps.front()), x1 = static_cast<double>(s.steps.back());
  map->data()->setSize(cols, L);
  map->data()->setRange(QCPRange(x0, x1 > x0 ? x1 : x0 + 1), QCPRange(1, L));
  for (int c = 0; c < cols; ++c) {
    // Nearest stored step to this column's centre.
    const double x = cols > 1 ? x0 + (x1 - x0) * c / (cols - 1) : x0;
    auto it = std::lower_bound(s.steps.begin(), s.steps.end(), static_cast<int64_t>(std::llround(x)));
    size_t i = static_cast<size_t>(std::min<ptrdiff_t>(it - s.steps.begin(), n - 1));
    if (i > 0 && std::abs(static_cast<double>(s.steps[i - 1]) - x) < std::abs(static_cast<double>(s.steps[i]) - x)) --i;
    for (int l = 0; l < L; ++l) {
      const double v = s.values[i * static_cast<size_t>(L) + static_cast<size_t>(l)];
      map->data()->setCell(c, l, v);
      if (std::isfinite(v)) { lo = std::min(lo, v); hi = std::max(hi, v); }
    }
  }
  if (!(lo <= hi)) return {0, 1};
  return {lo, hi > lo ? hi : lo + 1e-12};
}

std::pair<double, double> fillMatrixHeatmap(QCPColorMap* map, const store::Matrix& m, bool rowNormalize) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  map->data()->setSize(m.cols, m.rows);
  map->data()->setRange(QCPRange(1, std::max(m.cols, 2)), QCPRange(1, std::max(m.rows, 2)));
  for (int r = 0; r < m.rows; ++r) {
    double rlo = std::numeric_limits<double>::infinity(), rhi = -rlo;
    for (int c = 0; c < m.cols; ++c) {
      const double v = m.data[static_cast<size_t>(r) * m.cols + c];
      if (std::isfinite(v)) { rlo = std::min(rlo, v); rhi = std::max(rhi, v); }
    }
    for (int c = 0; c < m.cols; ++c) {
      double v = m.data[static_cast<size_t>(r) * m.cols + c];
      if (rowNormalize && std::isfinite(v)) v = rhi > rlo ? (v - rlo) / (rhi - rlo) : 0.0;
      map->data()->setCell(c, r, v);
      if (std::isfinite(v)) { lo = std::min(lo, v); hi = std::max(hi, v); }
      else map->data()->setAlpha(c, r, 0);
    }
  }
  if (!(lo <= hi)) return {0, 1};
  return {lo, hi > lo ? hi : lo + 1e-12};
}

std::vector<float> layerValuesAt(const store::LayerSeries& s, int64_t step, int64_t* foundStep) {
  auto it = std::upper_bound(s.steps.begin(), s.steps.end(), step);
  if (it == s.steps.begin()) return {};
  const size_t i = static_cast<size_t>(it - s.steps.begin()) - 1;
  if (foundStep) *foundStep = s.steps[i];
  const size_t L = static_cast<size_t>(s.nLayers);
  return {s.values.begin() + static_cast<long>(i * L), s.values.begin() + static_cast<long>((i + 1) * L)};
}

std::vector<store::ScalarPoint> smooth(const std::vector<store::ScalarPoint>& p, double alpha) {
  if (alpha <= 0) return p;
  std::vector<store::ScalarPoint> out;
  out.reserve(p.size());
  double ema = 0;
  bool first = true;
  for (const auto& x : p) {
    if (!std::isfinite(x.value)) { out.push_back(x); continue; }
    ema = first ? x.value : alpha * ema + (1 - alpha) * x.value;
    first = false;
    out.push_back({x.step, ema});
  }
  return out;
}

}  // namespace depthlab::ui

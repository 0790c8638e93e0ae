// See plot_helpers.h.
#include "plot/plot_helpers.h"

#include <qcustomplot.h>

#include <QFile>
#include <QFileDialog>
#include <QMenu>
#include <QRegularExpression>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <limits>

#include "plot/figure_layout.h"
#include "plot/plot_wheel.h"

namespace depthlab::ui {

namespace {
const char* kZoomed = "depthlabUserZoomed";
const char* kBadge = "depthlabZoomBadge";  // on the top axis while it carries the zoom notice
const char* kCellErrors = "depthlabCellErrors";  // QList<double>: a colour map's standard errors

// The error bars attached to `data` (bars or a graph), or null.
const QCPErrorBars* errorBarsOf(QCustomPlot* plot, const QCPAbstractPlottable* data) {
  for (int i = 0; i < plot->plottableCount(); ++i) {
    auto* whiskers = qobject_cast<QCPErrorBars*>(plot->plottable(i));
    if (whiskers && whiskers->dataPlottable() == data) return whiskers;
  }
  return nullptr;
}

// The +- error of point `index` under `whiskers` (errorBarsOf), else NaN.
double pointError(const QCPErrorBars* whiskers, int index) {
  return whiskers && index < whiskers->dataCount() ? whiskers->data()->at(index).errorPlus
                                                   : std::numeric_limits<double>::quiet_NaN();
}

// Gives `map` these cells unless it holds exactly them already (NaN equal to NaN). A colour
// map whose data is set rebuilds its image from every cell on the next replot; one whose data
// is left alone draws the image it cached. The dashboard refills every heatmap whenever any run
// gains a row, and most of them (a finished run, the matrices at an unmoved cursor) are the same.
void setCellsIfChanged(QCPColorMap* map, QCPColorMapData& cells) {
  QCPColorMapData* held = map->data();
  bool same = !held->isEmpty() && held->keySize() == cells.keySize() && held->valueSize() == cells.valueSize() &&
              held->keyRange() == cells.keyRange() && held->valueRange() == cells.valueRange();
  for (int k = 0; same && k < cells.keySize(); ++k) {
    for (int v = 0; same && v < cells.valueSize(); ++v) {
      const double a = held->cell(k, v), b = cells.cell(k, v);
      same = (a == b || (std::isnan(a) && std::isnan(b))) && held->alpha(k, v) == cells.alpha(k, v);
    }
  }
  if (!same) map->setData(&cells, true);
}

// The standard errors setCellErrors gave a colour map (cell ky * keySize + kx), maybe none.
QList<double> cellErrors(const QCPColorMap* map) { return map->property(kCellErrors).value<QList<double>>(); }

// Cell (kx, ky)'s entry of `errors` (cellErrors), else NaN.
double cellError(const QList<double>& errors, const QCPColorMapData* d, int kx, int ky) {
  const qsizetype cell = static_cast<qsizetype>(ky) * d->keySize() + kx;
  return cell < errors.size() ? errors[cell] : std::numeric_limits<double>::quiet_NaN();
}

// The axes' ranges, to tell a drag that moved the view from a click.
QString rangesOf(const QCustomPlot* plot) {
  QString out;
  for (auto* rect : plot->axisRects()) {
    for (auto* axis : rect->axes()) out += QString::number(axis->range().lower) + QLatin1Char(',') + QString::number(axis->range().upper) + QLatin1Char(';');
  }
  return out;
}
}  // namespace

namespace {

// The centre of cell (kx, ky): QCPColorMapData::cellToCoord divides by (size - 1), NaN for a
// map one cell wide or tall (an imported model's single probe); such a cell's centre is its
// range's.
void cellCentre(const QCPColorMapData* d, int kx, int ky, double* x, double* y) {
  d->cellToCoord(kx, ky, x, y);
  if (d->keySize() == 1) *x = d->keyRange().center();
  if (d->valueSize() == 1) *y = d->valueRange().center();
}

}  // namespace

QString hoverText(QCustomPlot* plot, const QPoint& pos) {
  for (int i = 0; i < plot->plottableCount(); ++i) {
    if (auto* map = qobject_cast<QCPColorMap*>(plot->plottable(i))) {
      double x = map->keyAxis()->pixelToCoord(pos.x()), y = map->valueAxis()->pixelToCoord(pos.y());
      int kx, ky;
      map->data()->coordToCell(x, y, &kx, &ky);
      if (kx < 0 || ky < 0 || kx >= map->data()->keySize() || ky >= map->data()->valueSize()) continue;
      double v = map->data()->cell(kx, ky);
      if (std::isnan(v)) continue;
      double cx, cy;
      cellCentre(map->data(), kx, ky, &cx, &cy);
      QString value = QString::number(v, 'g', 6);
      if (const double e = cellError(cellErrors(map), map->data(), kx, ky); std::isfinite(e)) {
        value += QStringLiteral(" \u00b1 %1 (standard error)").arg(e, 0, 'g', 3);
      }
      return QStringLiteral("%1 = %2, %3 = %4\nvalue %5")
          .arg(map->keyAxis()->label()).arg(cx, 0, 'g', 6)
          .arg(map->valueAxis()->label()).arg(cy, 0, 'g', 4).arg(value);
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
        const double e = pointError(errorBarsOf(plot, g), static_cast<int>(it - g->data()->constBegin()));
        if (std::isfinite(e) && e > 0) best += QStringLiteral(" \u00b1 %1 (standard error)").arg(e, 0, 'g', 3);
      }
    }
  }
  for (int i = 0; i < plot->plottableCount() && best.isEmpty(); ++i) {
    if (auto* bars = qobject_cast<QCPBars*>(plot->plottable(i))) {
      // The bar whose width spans the cursor (grouped bars sit off the layer's integer key).
      const double x = bars->keyAxis()->pixelToCoord(pos.x()), half = bars->width() / 2;
      for (auto it = bars->data()->findBegin(x - half, true);
           it != bars->data()->constEnd() && it->key <= x + half; ++it) {
        if (std::abs(it->key - x) > half) continue;
        best = QStringLiteral("%1 layer %2: %3")
                   .arg(bars->name()).arg(std::lround(it->key)).arg(it->value, 0, 'g', 6);
        const double e = pointError(errorBarsOf(plot, bars), static_cast<int>(it - bars->data()->constBegin()));
        if (std::isfinite(e) && e > 0) best += QStringLiteral(" \u00b1 %1 (standard error)").arg(e, 0, 'g', 3);
        break;
      }
    }
  }
  return best;
}

void makeInteractive(QCustomPlot* plot) {
  plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  wheelScrollsUnlessAsked(plot);
  plot->setProperty(kZoomed, false);
  plot->setMouseTracking(true);
  QObject::connect(plot, &QCustomPlot::mouseWheel, plot, [plot](QWheelEvent*) {
    setUserZoomed(plot, true);
  });
  QObject::connect(plot, &QCustomPlot::mousePress, plot, [plot](QMouseEvent* e) {
    plot->setProperty("depthlabPressRanges", rangesOf(plot));
    plot->setProperty("depthlabPressPos", e->pos());
  });
  QObject::connect(plot, &QCustomPlot::mouseRelease, plot, [plot](QMouseEvent*) {
    if (plot->property("depthlabPressRanges").toString() != rangesOf(plot)) setUserZoomed(plot, true);
  });
  QObject::connect(plot, &QCustomPlot::mouseDoubleClick, plot, [plot](QMouseEvent*) { resetZoom(plot); });
  QObject::connect(plot, &QCustomPlot::mouseMove, plot, [plot](QMouseEvent* e) {
    const QString text = hoverText(plot, e->pos());
    if (text.isEmpty()) QToolTip::hideText();
    else QToolTip::showText(e->globalPosition().toPoint(), text, plot);
  });
}

bool userZoomed(const QCustomPlot* plot) { return plot->property(kZoomed).toBool(); }

void setUserZoomed(QCustomPlot* plot, bool zoomed) {
  plot->setProperty(kZoomed, zoomed);
  updateZoomBadge(plot);
}

namespace {

// A plot's fit for resetZoom, owned by the plot.
class Refit : public QObject {
 public:
  Refit(QCustomPlot* plot, std::function<void()> fit) : QObject(plot), fit(std::move(fit)) {
    setObjectName(QStringLiteral("depthlabRefit"));
  }
  std::function<void()> fit;
};

}  // namespace

void setRefit(QCustomPlot* plot, std::function<void()> fit) {
  if (auto* r =
          plot->findChild<Refit*>(QStringLiteral("depthlabRefit"), Qt::FindDirectChildrenOnly)) {
    r->fit = std::move(fit);
  } else {
    new Refit(plot, std::move(fit));
  }
}

void resetZoom(QCustomPlot* plot) {
  plot->setProperty(kZoomed, false);
  updateZoomBadge(plot);
  auto* r = plot->findChild<Refit*>(QStringLiteral("depthlabRefit"), Qt::FindDirectChildrenOnly);
  if (r && r->fit) {
    const auto fit = r->fit;  // a copy: the fit may set a new one
    fit();
  } else {
    plot->rescaleAxes();
  }
  // The legend again where it hides nothing at the new range (beside the plot when no corner is
  // free), as the view placed it when it drew.
  if (plot->legend) figures::placeLegend(plot, plot->axisRect(), figures::LegendOutside::Right);
  plot->replot(QCustomPlot::rpQueuedReplot);
}

bool updateZoomBadge(QCustomPlot* plot) {
  const bool zoomed = userZoomed(plot);
  for (int i = 0; i < plot->itemCount(); ++i) {
    if (plot->item(i)->property(kFitMarkProperty).toBool()) plot->item(i)->setVisible(!zoomed);
  }
  // The notice is the label of the (otherwise bare) top axis: above the data, in the margin
  // the axis rect gives up for it, so it covers no point, curve, legend or colour bar.
  auto* top = plot->xAxis2;
  const bool shown = top->visible() && top->property(kBadge).toBool();
  if (zoomed == shown) return zoomed;
  if (zoomed) {
    top->setProperty(kBadge, true);
    top->setTicks(false);
    top->setTickLabels(false);
    top->setBasePen(Qt::NoPen);
    top->setLabel(QObject::tr("zoomed: not following new data (double-click to follow)"));
    top->setLabelColor(QColor(160, 60, 0));
    QFont f = plot->font();
    f.setPointSizeF(std::round(f.pointSizeF() * 0.85));  // whole points: measured as drawn
    top->setLabelFont(f);
    top->setLabelPadding(2);
  }
  top->setVisible(zoomed);
  plot->replot(QCustomPlot::rpQueuedReplot);
  return zoomed;
}

QString zoomBadgeText(const QCustomPlot* plot) {
  const auto* top = plot->xAxis2;
  return top->visible() && top->property(kBadge).toBool() ? top->label() : QString();
}

bool wasClick(const QCustomPlot* plot, const QPoint& releasePos) {
  const QPoint pressed = plot->property("depthlabPressPos").toPoint();
  return plot->property("depthlabPressRanges").toString() == rangesOf(plot) &&
         (releasePos - pressed).manhattanLength() <= 4;
}

QString plotCsv(QCustomPlot* plot) {
  QString out = QStringLiteral("series,x,y,value,standard_error\n");
  auto quote = [](QString t) { return QLatin1Char('"') + t.replace(QLatin1Char('"'), QStringLiteral("\"\"")) + QLatin1Char('"'); };
  auto number = [](double v) { return std::isfinite(v) ? QString::number(v, 'g', 10) : QString(); };
  for (int i = 0; i < plot->graphCount(); ++i) {
    auto* g = plot->graph(i);
    const auto* whiskers = errorBarsOf(plot, g);
    int index = 0;
    for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it, ++index) {
      out += QStringLiteral("%1,%2,%3,,%4\n").arg(quote(g->name())).arg(it->key, 0, 'g', 10)
                 .arg(it->value, 0, 'g', 10).arg(number(pointError(whiskers, index)));
    }
  }
  for (int i = 0; i < plot->plottableCount(); ++i) {
    if (auto* b = qobject_cast<QCPBars*>(plot->plottable(i))) {
      const auto* whiskers = errorBarsOf(plot, b);
      int index = 0;
      for (auto it = b->data()->constBegin(); it != b->data()->constEnd(); ++it, ++index) {
        out += QStringLiteral("%1,%2,%3,,%4\n").arg(quote(b->name())).arg(std::round(it->key))
                   .arg(it->value, 0, 'g', 10).arg(number(pointError(whiskers, index)));
      }
    } else if (auto* m = qobject_cast<QCPColorMap*>(plot->plottable(i))) {
      auto* d = m->data();
      const auto errors = cellErrors(m);
      for (int kx = 0; kx < d->keySize(); ++kx) {
        for (int ky = 0; ky < d->valueSize(); ++ky) {
          double x, y;
          cellCentre(d, kx, ky, &x, &y);
          const double v = d->cell(kx, ky);
          if (std::isfinite(v)) {
            out += QStringLiteral("%1,%2,%3,%4,%5\n").arg(quote(m->name().isEmpty() ? QStringLiteral("heatmap") : m->name()))
                       .arg(x, 0, 'g', 10).arg(y, 0, 'g', 10).arg(v, 0, 'g', 10).arg(number(cellError(errors, d, kx, ky)));
          }
        }
      }
    }
  }
  return out;
}

bool savePlotCsv(QCustomPlot* plot, const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
  f.write(plotCsv(plot).toUtf8());
  return true;
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
  // One column is drawn over its key range: centred on its step (it had spanned [step,
  // step + 1] with the step's tick at its left edge).
  QCPColorMapData cells(cols, L, cols > 1 ? QCPRange(x0, x1) : QCPRange(x0 - 0.5, x0 + 0.5),
                        QCPRange(1, L));  // (cols, L)
  for (int c = 0; c < cols; ++c) {
    // Nearest stored step to this column's centre.
    const size_t i = nearestStepIndex(s.steps, cols > 1 ? x0 + (x1 - x0) * c / (cols - 1) : x0);
    for (int l = 0; l < L; ++l) {
      const double v = s.values[i * static_cast<size_t>(L) + static_cast<size_t>(l)];
      cells.setCell(c, l, v);
      if (std::isfinite(v)) { lo = std::min(lo, v); hi = std::max(hi, v); }
    }
  }
  setCellsIfChanged(map, cells);
  if (!(lo <= hi)) return {0, 1};
  return {lo, hi > lo ? hi : lo + 1e-12};
}

std::pair<double, double> fillMatrixHeatmap(QCPColorMap* map, const store::Matrix& m, bool rowNormalize) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  QCPColorMapData cells(m.cols, m.rows, QCPRange(1, std::max(m.cols, 2)), QCPRange(1, std::max(m.rows, 2)));
  for (int r = 0; r < m.rows; ++r) {
    double rlo = std::numeric_limits<double>::infinity(), rhi = -rlo;
    for (int c = 0; c < m.cols; ++c) {
      const double v = m.data[static_cast<size_t>(r) * m.cols + c];
      if (std::isfinite(v)) { rlo = std::min(rlo, v); rhi = std::max(rhi, v); }
    }
    for (int c = 0; c < m.cols; ++c) {
      double v = m.data[static_cast<size_t>(r) * m.cols + c];
      if (rowNormalize && std::isfinite(v)) v = rhi > rlo ? (v - rlo) / (rhi - rlo) : 0.0;
      cells.setCell(c, r, v);
      if (std::isfinite(v)) { lo = std::min(lo, v); hi = std::max(hi, v); }
      else cells.setAlpha(c, r, 0);
    }
  }
  setCellsIfChanged(map, cells);
  if (!(lo <= hi)) return {0, 1};
  return {lo, hi > lo ? hi : lo + 1e-12};
}

void setCellErrors(QCPColorMap* map, const store::Matrix* errors) {
  if (!errors) {
    map->setProperty(kCellErrors, QVariant());
    return;
  }
  QList<double> cells;
  for (float e : errors->data) cells << static_cast<double>(e);
  map->setProperty(kCellErrors, QVariant::fromValue(cells));
}

std::vector<float> layerValuesExactlyAt(const store::LayerSeries& s, int64_t step) {
  int64_t found = -1;
  auto values = layerValuesAt(s, step, &found);
  return found == step ? values : std::vector<float>{};
}

void setLogScale(QCPAxis* axis, bool log) {
  const auto type = log ? QCPAxis::stLogarithmic : QCPAxis::stLinear;
  if (axis->scaleType() == type) return;
  axis->setScaleType(type);
  axis->setTicker(log ? QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog) : QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
}

size_t nearestStepIndex(const std::vector<int64_t>& steps, double x) {
  auto it = std::lower_bound(steps.begin(), steps.end(), static_cast<int64_t>(std::llround(x)));
  size_t i = std::min(static_cast<size_t>(it - steps.begin()), steps.size() - 1);
  if (i > 0 && std::abs(static_cast<double>(steps[i - 1]) - x) < std::abs(static_cast<double>(steps[i]) - x)) --i;
  return i;
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

void addSaveMenu(QCustomPlot* plot, const QString& baseName) {
  plot->setContextMenuPolicy(Qt::CustomContextMenu);
  QObject::connect(plot, &QWidget::customContextMenuRequested, plot, [plot, baseName](const QPoint& pos) {
    QMenu menu;
    auto* png = menu.addAction(QObject::tr("Save PNG…"));
    auto* csv = menu.addAction(QObject::tr("Save CSV…"));
    auto* reset = menu.addAction(QObject::tr("Reset zoom"));
    auto* chosen = menu.exec(plot->mapToGlobal(pos));
    QString base = baseName;
    base.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9_.-]+")), QStringLiteral("_"));
    if (chosen == png) {
      const QString path = QFileDialog::getSaveFileName(plot, QObject::tr("Save panel as PNG"), base + QStringLiteral(".png"),
                                                        QObject::tr("PNG (*.png)"));
      if (!path.isEmpty()) plot->savePng(path, 0, 0, 2.0);
    } else if (chosen == csv) {
      const QString path = QFileDialog::getSaveFileName(plot, QObject::tr("Save panel data as CSV"), base + QStringLiteral(".csv"),
                                                        QObject::tr("CSV (*.csv)"));
      if (!path.isEmpty()) savePlotCsv(plot, path);
    } else if (chosen == reset) {
      resetZoom(plot);
    }
  });
}

}  // namespace depthlab::ui

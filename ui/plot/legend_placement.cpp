// The legend half of figure_layout.h: the pixels the data draws (dataPixels), a legend put
// where it covers none of them (an inside corner, else room made above the data, else outside
// beside or below the axis rect: placeLegend) and the count of points under it. Lays the plot
// out to measure (figure_layout.cpp's layOut); it neither replots nor fits tick labels or titles.
#include "plot/figure_layout.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

#include "plot/plot_helpers.h"

namespace depthlab::ui::figures {

std::vector<QPointF> dataPixels(QCPAxisRect* rect) {
  std::vector<QPointF> out;
  auto* plot = rect->parentPlot();
  for (int i = 0; i < plot->plottableCount(); ++i) {
    auto* p = plot->plottable(i);
    if (!p->visible() || !p->keyAxis() || p->keyAxis()->axisRect() != rect) continue;
    auto* kx = p->keyAxis();
    auto* vy = p->valueAxis();
    if (auto* g = qobject_cast<QCPGraph*>(p)) {
      QPointF last;
      bool have = false;
      for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it) {
        if (!std::isfinite(it->value)) { have = false; continue; }
        const QPointF px(kx->coordToPixel(it->key), vy->coordToPixel(it->value));
        if (have && g->lineStyle() != QCPGraph::lsNone) {
          // Points along the line, every ~4 px, so a legend cannot sit on a long segment.
          const double len = std::hypot(px.x() - last.x(), px.y() - last.y());
          const int n = std::min(200, static_cast<int>(len / 4));
          for (int k = 1; k < n; ++k) out.push_back(last + (px - last) * (static_cast<double>(k) / n));
        }
        out.push_back(px);
        last = px;
        have = true;
      }
    } else if (auto* b = qobject_cast<QCPBars*>(p)) {
      const double half = b->width() / 2;
      for (auto it = b->data()->constBegin(); it != b->data()->constEnd(); ++it) {
        if (!std::isfinite(it->value)) continue;
        const double x0 = kx->coordToPixel(it->key - half), x1 = kx->coordToPixel(it->key + half);
        const double y0 = vy->coordToPixel(0), y1 = vy->coordToPixel(it->value);
        const double top = std::min(y0, y1), bottom = std::max(y0, y1);
        for (double y = top; y <= bottom; y += 4) {
          for (double x = std::min(x0, x1); x <= std::max(x0, x1) + 0.5; x += 3) out.emplace_back(x, y);
        }
        out.emplace_back((x0 + x1) / 2, y1);
      }
    }
  }
  // The values written beside bars run off the range (fitLayerBarAxes) are data too.
  for (int i = 0; i < plot->itemCount(); ++i) {
    auto* t = qobject_cast<QCPItemText*>(plot->item(i));
    if (!t || !t->visible() || !t->property(kFitMarkProperty).toBool() ||
        t->position->axisRect() != rect) {
      continue;
    }
    const QRectF box =
        QRectF(t->topLeft->pixelPosition(), t->bottomRight->pixelPosition()).normalized();
    for (double y = box.top(); y <= box.bottom() + 0.5; y += 4) {
      for (double x = box.left(); x <= box.right() + 0.5; x += 3) out.emplace_back(x, y);
    }
  }
  return out;
}

namespace {

int countIn(const QRectF& box, const std::vector<QPointF>& pts) {
  int n = 0;
  for (const auto& p : pts) n += box.contains(p);
  return n;
}

// The object name of the column that holds a legend placed beside its axis rect.
constexpr const char* kLegendHolder = "depthlabLegendHolder";

// The legend's index in the inset layout of `rect` (-1 when it is elsewhere).
int insetIndexOf(QCPAxisRect* rect, QCPLegend* legend) {
  auto* inset = rect->insetLayout();
  for (int i = 0; i < inset->elementCount(); ++i) {
    if (inset->elementAt(i) == legend) return i;
  }
  return -1;
}

}  // namespace

int pointsUnderLegend(QCustomPlot* plot, QCPAxisRect* rect) {
  if (!plot->legend || !plot->legend->visible()) return 0;
  return countIn(QRectF(plot->legend->outerRect()), dataPixels(rect));
}

namespace {

// An empty legend is hidden (it drew an empty box: an imported model's loss and gradient
// panels) and shown again once it has entries; one its owner hid stays hidden. Returns whether
// the legend is to be placed (visible, with entries).
bool showIfItHasEntries(QCPLegend* legend) {
  constexpr const char* kHiddenEmpty = "depthlabLegendHiddenEmpty";
  if (legend->itemCount() == 0) {
    if (legend->visible()) {
      legend->setVisible(false);
      legend->setProperty(kHiddenEmpty, true);
    }
    return false;
  }
  if (!legend->visible()) {
    if (!legend->property(kHiddenEmpty).toBool()) return false;
    legend->setVisible(true);
    legend->setProperty(kHiddenEmpty, false);
  }
  return true;
}

// Back into the axis rect's inset layout, top right (an earlier call moved it out).
void bringInside(QCustomPlot* plot, QCPAxisRect* rect, QCPLegend* legend) {
  if (insetIndexOf(rect, legend) >= 0) return;
  auto* from = legend->layout();
  if (from) from->take(legend);
  if (from && from->objectName() == QLatin1String(kLegendHolder) && from->layout()) {
    from->layout()->remove(from);  // deletes the holder and its spacer
  }
  plot->plotLayout()->simplify();
  rect->insetLayout()->addElement(legend, Qt::AlignTop | Qt::AlignRight);
  legend->setWrap(0);
  legend->setFillOrder(QCPLayoutGrid::foRowsFirst, true);
}

// Whether the legend, inside, lies within the axis rect and over none of its data points. A
// legend taller than the data area ran over the panel's top edge, its frame cut there, while
// no data point lay under it.
bool fitsClear(QCPAxisRect* rect, QCPLegend* legend) {
  return rect->rect().contains(legend->outerRect()) &&
         countIn(QRectF(legend->outerRect()).adjusted(-2, -2, 2, 2), dataPixels(rect)) == 0;
}

// Tries the inside corners by the points their box would cover (estimated, then checked for
// real); then, when every corner hides data and the legend takes less than half the height,
// room above the data (the value axis reaches higher, the curves keep the lower part).
bool placeInside(QCustomPlot* plot, QCPAxisRect* rect, QCPLegend* legend) {
  auto* inset = rect->insetLayout();
  const auto pts = dataPixels(rect);
  const QSizeF size = legend->minimumOuterSizeHint() + QSizeF(4, 4);  // a little air around it
  // The inset layout places the legend inside its own margins (QCustomPlot: 12 px).
  const QRectF r(rect->rect().marginsRemoved(inset->margins()));
  const Qt::Alignment corners[] = {Qt::AlignTop | Qt::AlignRight, Qt::AlignTop | Qt::AlignLeft,
                                   Qt::AlignBottom | Qt::AlignRight, Qt::AlignBottom | Qt::AlignLeft};
  auto tryCorner = [&](int i) {
    inset->setInsetAlignment(insetIndexOf(rect, legend), corners[i]);
    layOut(plot);
    return fitsClear(rect, legend);
  };
  std::vector<std::pair<int, int>> order;  // (points, corner)
  for (int i = 0; i < 4; ++i) {
    const auto c = corners[i];
    const double x = (c & Qt::AlignRight) ? r.right() - size.width() : r.left();
    const double y = (c & Qt::AlignBottom) ? r.bottom() - size.height() : r.top();
    order.emplace_back(countIn(QRectF(QPointF(x, y), size), pts), i);
  }
  std::stable_sort(order.begin(), order.end());
  for (const auto& [estimate, i] : order) {
    if (estimate > 0) break;
    if (tryCorner(i)) return true;
  }
  auto* y = rect->axis(QCPAxis::atLeft);
  const double share = (size.height() + 4) / std::max(1.0, r.height());
  if (!y || y->scaleType() != QCPAxis::stLinear || share >= 0.5 || plot->property("depthlabUserZoomed").toBool()) {
    return false;
  }
  const QCPRange range = y->range();
  y->setRange(range.lower, range.lower + range.size() / (1.0 - share));
  if (tryCorner(0) || tryCorner(1)) return true;
  y->setRange(range);
  return false;
}

// The cell of `rect` in the plot's top layout; a rect nested elsewhere: the bottom row's first.
std::pair<int, int> gridCellOf(QCPLayoutGrid* grid, QCPAxisRect* rect) {
  for (int rr = 0; rr < grid->rowCount(); ++rr) {
    for (int cc = 0; cc < grid->columnCount(); ++cc) {
      if (grid->element(rr, cc) == rect) return {rr, cc};
    }
  }
  return {grid->rowCount() - 1, 0};
}

// Outside the axis rect, beside it (one column) or below it (entries side by side). The plot
// keeps its size: the axis rect gives the legend its room.
void placeOutside(QCustomPlot* plot, QCPAxisRect* rect, QCPLegend* legend, LegendOutside outside) {
  rect->insetLayout()->take(legend);
  rect->insetLayout()->simplify();
  auto* grid = plot->plotLayout();
  const auto [row, column] = gridCellOf(grid, rect);
  legend->setMargins(QMargins(0, 0, 0, 0));
  // Beside when asked and it fits the height and leaves the data most of the width (seven runs'
  // names had taken 55% of a Compare panel); else below.
  const QSize want = legend->minimumOuterSizeHint();
  const bool beside = outside == LegendOutside::Right && want.width() <= 0.4 * plot->viewport().width() &&
                      want.height() <= rect->outerRect().height() - std::max(1, rect->margins().top());
  if (beside) {
    // In a holder column: the legend at its own height level with the data's top, a spacer
    // under it (a grid cell alone would stretch the legend over the plot's whole height, its
    // entries spread apart and its frame drawn on the widget's edge).
    auto* holder = new QCPLayoutGrid;
    holder->setObjectName(QLatin1String(kLegendHolder));
    grid->insertColumn(column + 1);
    grid->addElement(row, column + 1, holder);
    grid->setColumnStretchFactor(column + 1, 0.001);
    holder->addElement(0, 0, legend);
    holder->addElement(1, 0, new QCPLayoutElement(plot));
    holder->setRowStretchFactor(0, 0.001);
    holder->setRowStretchFactor(1, 1);
    holder->setRowSpacing(0);
    holder->setMargins(QMargins(4, std::max(1, rect->margins().top()), 2, 0));
    legend->setWrap(0);
    legend->setFillOrder(QCPLayoutGrid::foRowsFirst, true);
    return;
  }
  grid->insertRow(row + 1);
  grid->addElement(row + 1, column, legend);
  grid->setRowStretchFactor(row + 1, 0.001);
  // As many entries per line as the plot's width takes (entries keep their full text).
  double widest = 1;
  for (int i = 0; i < legend->itemCount(); ++i) {
    widest = std::max(widest, static_cast<double>(legend->item(i)->minimumOuterSizeHint().width()));
  }
  const double room = plot->viewport().width() - 4;
  legend->setWrap(std::clamp(static_cast<int>((room + legend->columnSpacing()) / (widest + legend->columnSpacing())), 1,
                             std::max(1, legend->itemCount())));
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);  // rearranges by the new wrap
}

}  // namespace

bool placeLegend(QCustomPlot* plot, QCPAxisRect* rect, LegendOutside outside) {
  auto* legend = plot->legend;
  if (!legend || !showIfItHasEntries(legend)) return true;
  bringInside(plot, rect, legend);
  layOut(plot);  // sizes the axis rect with the legend inside
  // Already inside and clear of the data (a live view redrawn): it stays where it is.
  if (fitsClear(rect, legend) || placeInside(plot, rect, legend)) return true;
  placeOutside(plot, rect, legend, outside);
  layOut(plot);
  return false;
}

}  // namespace depthlab::ui::figures

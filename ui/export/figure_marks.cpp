// See figure_marks.h.
#include "export/figure_marks.h"

#include <qcustomplot.h>

#include <QFontMetricsF>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "plot/figure_builders.h"
#include "plot/plot_helpers.h"

namespace depthlab::ui::paper {

namespace {

// A box of `half` pixels either side of a vertical or horizontal run, at least 1 px wide.
QRectF around(QPointF a, QPointF b, double half) {
  return QRectF(a, b).normalized().adjusted(-half, -half, half, half);
}

void addBars(QCPBars* b, const QRectF& clip, std::vector<Mark>& out) {
  auto* kx = b->keyAxis();
  auto* vy = b->valueAxis();
  const double half = b->width() / 2;
  for (auto it = b->data()->constBegin(); it != b->data()->constEnd(); ++it) {
    if (!std::isfinite(it->value) || it->value == 0) continue;
    const QRectF box =
        QRectF(QPointF(kx->coordToPixel(it->key - half), vy->coordToPixel(0)),
               QPointF(kx->coordToPixel(it->key + half), vy->coordToPixel(it->value)))
            .normalized() &
        clip;
    if (!box.isEmpty()) out.push_back({box, {}, false, QStringLiteral("bar of ") + b->name()});
  }
}

void addErrorBars(QCPErrorBars* e, const QRectF& clip, std::vector<Mark>& out) {
  auto* data = e->dataPlottable() ? e->dataPlottable()->interface1D() : nullptr;
  if (!data) return;
  auto* kx = e->keyAxis();
  auto* vy = e->valueAxis();
  const double half = std::max(0.5, e->pen().widthF() / 2);
  for (int k = 0; k < std::min(data->dataCount(), e->dataCount()); ++k) {
    const auto& d = e->data()->at(k);
    const double key = data->dataMainKey(k), v = data->dataMainValue(k);
    if (!std::isfinite(v) || !(d.errorPlus > 0 || d.errorMinus > 0)) continue;
    const double x = kx->coordToPixel(key);
    const QRectF box = around({x, vy->coordToPixel(v - d.errorMinus)},
                              {x, vy->coordToPixel(v + d.errorPlus)}, half) &
                       clip;
    if (!box.isEmpty()) {
      out.push_back({box, {}, false, QStringLiteral("error bar of ") + e->dataPlottable()->name()});
    }
  }
}

void addGraph(QCPGraph* g, const QRectF& clip, std::vector<Mark>& out) {
  auto* kx = g->keyAxis();
  auto* vy = g->valueAxis();
  const double marker = g->scatterStyle().isNone() ? 0 : g->scatterStyle().size() / 2;
  const double pen = std::max(0.5, g->pen().widthF() / 2);
  QPointF last;
  bool have = false;
  for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it) {
    if (!std::isfinite(it->value)) {
      have = false;
      continue;
    }
    const QPointF px(kx->coordToPixel(it->key), vy->coordToPixel(it->value));
    if (marker > 0 && clip.contains(px)) {
      out.push_back({around(px, px, marker), {}, false, QStringLiteral("marker of ") + g->name()});
    }
    if (have && g->lineStyle() != QCPGraph::lsNone && g->pen().style() != Qt::NoPen) {
      const QLineF seg(last, px);
      const QRectF box = around(last, px, pen);
      if (box.intersects(clip))
        out.push_back({box, seg, true, QStringLiteral("line of ") + g->name()});
    }
    last = px;
    have = true;
  }
}

bool segmentCrosses(const QLineF& s, const QRectF& r) {
  if (r.contains(s.p1()) || r.contains(s.p2())) return true;
  const QLineF edges[] = {{r.topLeft(), r.topRight()},
                          {r.topRight(), r.bottomRight()},
                          {r.bottomRight(), r.bottomLeft()},
                          {r.bottomLeft(), r.topLeft()}};
  for (const auto& e : edges) {
    if (s.intersects(e, nullptr) == QLineF::BoundedIntersection) return true;
  }
  return false;
}

// The highest pixel (smallest y) a mark reaches within the columns of `box`.
double topWithin(const Mark& m, const QRectF& box) {
  if (!m.isLine) return m.box.top();
  double top = std::max(m.line.p1().y(), m.line.p2().y());
  const double x0 = std::max(box.left(), std::min(m.line.p1().x(), m.line.p2().x()));
  const double x1 = std::min(box.right(), std::max(m.line.p1().x(), m.line.p2().x()));
  const double dx = m.line.dx();
  for (double x : {x0, x1}) {
    if (std::abs(dx) < 1e-9) return std::min(m.line.p1().y(), m.line.p2().y());
    const double t = std::clamp((x - m.line.p1().x()) / dx, 0.0, 1.0);
    top = std::min(top, m.line.p1().y() + t * m.line.dy());
  }
  return top;
}

}  // namespace

QRectF textBox(QCPItemText* t) {
  const QMargins pad = t->padding();  // stacked values are moved by their padding
  return QRectF(t->topLeft->pixelPosition(), t->bottomRight->pixelPosition())
      .normalized()
      .adjusted(pad.left(), pad.top(), -pad.right(), -pad.bottom());
}

void lineUpFitValues(QCustomPlot* plot) {
  // The values of one layer: same place, same side, in their stacking order.
  std::map<std::tuple<QCPAxisRect*, double, bool>, std::vector<std::pair<int, QCPItemText*>>>
      groups;
  for (int i = 0; i < plot->itemCount(); ++i) {
    auto* t = qobject_cast<QCPItemText*>(plot->item(i));
    if (!t || !t->property(kFitMarkProperty).toBool() || !t->position->axisRect()) continue;
    const int stacked = t->property(figures::kStackedLinesProperty).toInt();
    const bool up = t->positionAlignment() & Qt::AlignTop;
    groups[{t->position->axisRect(), t->position->key(), up}].emplace_back(std::abs(stacked), t);
  }
  for (auto& [where, labels] : groups) {
    if (labels.size() < 2) continue;
    std::sort(labels.begin(), labels.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    auto* first = labels.front().second;
    const QFontMetricsF fm(first->font(), plot);
    const double gap = 0.4 * fm.height();
    double width = 0;
    for (const auto& [line, t] : labels) width += fm.horizontalAdvance(t->text()) + 2 + gap;
    const double left = first->position->pixelPosition().x();
    if (left + width > std::get<0>(where)->rect().right()) continue;  // no room: stay stacked
    double offset = 0;
    for (const auto& [line, t] : labels) {
      t->setPadding(QMargins(1 + static_cast<int>(std::lround(offset)), 0, 1, 0));
      offset += fm.horizontalAdvance(t->text()) + 2 + gap;
    }
  }
}

std::vector<Mark> panelMarks(QCPAxisRect* rect) {
  std::vector<Mark> out;
  auto* plot = rect->parentPlot();
  const QRectF clip = QRectF(rect->rect());
  for (int i = 0; i < plot->plottableCount(); ++i) {
    auto* p = plot->plottable(i);
    if (!p->visible() || !p->keyAxis() || p->keyAxis()->axisRect() != rect) continue;
    if (auto* b = qobject_cast<QCPBars*>(p))
      addBars(b, clip, out);
    else if (auto* e = qobject_cast<QCPErrorBars*>(p))
      addErrorBars(e, clip, out);
    else if (auto* g = qobject_cast<QCPGraph*>(p))
      addGraph(g, clip, out);
  }
  return out;
}

std::vector<Label> panelLabels(QCPAxisRect* rect) {
  std::vector<Label> out;
  auto* plot = rect->parentPlot();
  for (int i = 0; i < plot->itemCount(); ++i) {
    auto* t = qobject_cast<QCPItemText*>(plot->item(i));
    if (!t || !t->visible() || t->text().isEmpty() || t->position->axisRect() != rect) continue;
    out.push_back({textBox(t), t->text(), false});
  }
  if (plot->legend && plot->legend->visible() && plot->legend->layout() == rect->insetLayout()) {
    out.push_back({QRectF(plot->legend->outerRect()), QStringLiteral("legend"), true});
  }
  return out;
}

bool markTouches(const Mark& mark, const QRectF& box) {
  if (!mark.box.intersects(box)) return false;
  return !mark.isLine || segmentCrosses(mark.line, box);
}

bool raiseOverLabels(QCustomPlot* plot, QCPAxisRect* rect) {
  auto* y = rect->axis(QCPAxis::atLeft);
  if (!y || y->scaleType() != QCPAxis::stLinear || rect->height() < 20) return false;
  const QRectF area(rect->rect());
  const auto marks = panelMarks(rect);
  double upper = y->range().upper;
  const double lower = y->range().lower;
  for (const auto& label : panelLabels(rect)) {
    // Only a label against the top frame can be cleared by more room above the data.
    if (label.box.top() - area.top() > 0.34 * area.height()) continue;
    const QRectF box = label.box.adjusted(0.5, 0.5, -0.5, -0.5);
    const double share = (label.box.bottom() + 2 - area.top()) / area.height();
    if (share >= 0.6) continue;  // would squeeze the data into too little of the panel
    for (const auto& m : marks) {
      if (!markTouches(m, box)) continue;
      const double top = topWithin(m, box);
      if (top <= area.top() + 0.5) continue;  // runs off the range: its value says so
      const double v = y->pixelToCoord(top);
      upper = std::max(upper, (v - share * lower) / (1 - share));
    }
  }
  if (!(upper > y->range().upper * (1 + 1e-9))) return false;
  y->setRange(lower, upper);
  plot->replot(QCustomPlot::rpImmediateRefresh);
  return true;
}

}  // namespace depthlab::ui::paper

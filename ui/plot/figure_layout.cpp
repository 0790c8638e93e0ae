// See figure_layout.h: laying a plot out without drawing it, tick labels that never collide,
// axis titles and titles that fit, and refitting on resize. The legend's placement (and the
// data pixels it avoids) is in legend_placement.cpp. It draws no data: after a resize it only
// asks for a queued replot.
#include "plot/figure_layout.h"

#include <qcustomplot.h>

#include <QEvent>
#include <QFontMetricsF>
#include <QTimer>

#include <algorithm>
#include <cmath>
#include <limits>

#include "plot/plot_helpers.h"

namespace depthlab::ui::figures {

void layOut(QCustomPlot* plot) {
  // What QCustomPlot::replot does before it draws (its updateLayout is protected).
  auto* layout = plot->plotLayout();
  layout->update(QCPLayoutElement::upPreparation);  // tick vectors
  layout->update(QCPLayoutElement::upMargins);      // axis margins from the tick labels
  layout->update(QCPLayoutElement::upLayout);       // element rects, the legend's inset
}

std::vector<LabelBox> tickLabelBoxes(QCPAxis* axis) {
  std::vector<LabelBox> out;
  if (!axis->visible() || !axis->tickLabels()) return out;
  const auto ticks = axis->tickVector();
  const auto labels = axis->tickVectorLabels();
  const QFontMetricsF fm(axis->tickLabelFont(), axis->parentPlot());
  const QRect r = axis->axisRect()->rect();
  const bool horizontal = axis->orientation() == Qt::Horizontal;
  for (int i = 0; i < std::min(ticks.size(), labels.size()); ++i) {
    if (!axis->range().contains(ticks[i]) || labels[i].isEmpty()) continue;
    const double p = axis->coordToPixel(ticks[i]);
    const QSizeF size = fm.boundingRect(labels[i]).size();
    QRectF box;
    if (horizontal) {
      const double y = axis->axisType() == QCPAxis::atBottom ? r.bottom() + axis->padding()
                                                             : r.top() - axis->padding() - size.height();
      box = QRectF(p - size.width() / 2, y, size.width(), size.height());
    } else {
      const double x = axis->axisType() == QCPAxis::atLeft ? r.left() - axis->padding() - size.width()
                                                           : r.right() + axis->padding();
      box = QRectF(x, p - size.height() / 2, size.width(), size.height());
    }
    out.push_back({labels[i], box});
  }
  return out;
}

bool labelsCollide(const std::vector<LabelBox>& boxes, double gap) {
  if (boxes.size() < 2) return false;
  auto sorted = boxes;
  // Horizontal when the boxes spread along x more than along y.
  const bool horizontal = std::abs(boxes.back().box.center().x() - boxes.front().box.center().x()) >=
                          std::abs(boxes.back().box.center().y() - boxes.front().box.center().y());
  std::sort(sorted.begin(), sorted.end(), [horizontal](const LabelBox& a, const LabelBox& b) {
    return horizontal ? a.box.left() < b.box.left() : a.box.top() < b.box.top();
  });
  for (size_t i = 1; i < sorted.size(); ++i) {
    const double space = horizontal ? sorted[i].box.left() - sorted[i - 1].box.right()
                                    : sorted[i].box.top() - sorted[i - 1].box.bottom();
    if (space < gap) return true;
  }
  return false;
}

std::vector<QCPAxis*> labelledAxes(QCustomPlot* plot) {
  std::vector<QCPAxis*> axes;
  for (auto* rect : plot->axisRects()) {
    for (auto* axis : rect->axes()) {
      if (axis->visible() && axis->tickLabels()) axes.push_back(axis);
    }
  }
  for (auto* element : plot->plotLayout()->elements(true)) {
    if (auto* scale = qobject_cast<QCPColorScale*>(element)) {
      if (scale->visible() && scale->axis()->tickLabels()) axes.push_back(scale->axis());
    }
  }
  return axes;
}

void fitTickLabels(QCustomPlot* plot) {
  for (int round = 0; round < 10; ++round) {
    layOut(plot);
    bool changed = false;
    for (auto* axis : labelledAxes(plot)) {
      const double gap = 0.5 * QFontMetricsF(axis->tickLabelFont(), plot).height();
      if (!labelsCollide(tickLabelBoxes(axis), gap)) continue;
      auto ticker = axis->ticker();
      if (ticker->tickCount() > 2) {
        ticker->setTickCount(ticker->tickCount() - 1);
        changed = true;
      } else if (!ticker.dynamicCast<QCPAxisTickerFixed>() && !ticker.dynamicCast<QCPAxisTickerText>() &&
                 !ticker.dynamicCast<QCPAxisTickerLog>() && axis->scaleType() == QCPAxis::stLinear) {
        // Two labels at most: a round step of at least two thirds of the range.
        const double span = axis->range().size();
        const double decade = std::pow(10.0, std::floor(std::log10(span * 0.66)));
        double step = decade;
        for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
          if (decade * m >= span * 0.66) { step = decade * m; break; }
        }
        QSharedPointer<QCPAxisTickerFixed> fixed(new QCPAxisTickerFixed);
        fixed->setTickStep(step);
        fixed->setScaleStrategy(QCPAxisTickerFixed::ssNone);
        axis->setTicker(fixed);
        changed = true;
      } else if (axis->orientation() == Qt::Horizontal && axis->tickLabelRotation() == 0) {
        axis->setTickLabelRotation(-90);  // a last resort that always fits
        changed = true;
      }
    }
    if (!changed) break;
  }
}

QString onTwoLines(const QString& text) {
  int best = -1;
  for (int i = 0; i < text.size(); ++i) {
    if (text[i] != QLatin1Char(' ')) continue;
    if (best < 0 || std::abs(i - text.size() / 2) < std::abs(best - text.size() / 2)) best = i;
  }
  QString two = text;
  if (best >= 0) two[best] = QLatin1Char('\n');
  return two;
}

void fitAxisLabels(QCustomPlot* plot) {
  layOut(plot);
  bool changed = false;
  for (auto* axis : labelledAxes(plot)) {
    if (axis->label().isEmpty()) continue;
    QString full = axis->property("fullLabel").toString();
    if (full.isEmpty()) {
      full = axis->label();
      axis->setProperty("fullLabel", full);
    }
    const QFontMetricsF fm(axis->labelFont(), plot);
    const double room = (axis->orientation() == Qt::Horizontal ? axis->axisRect()->width() : axis->axisRect()->height()) - 2;
    QString fitted = full;
    if (fm.horizontalAdvance(fitted) > room && fitted.contains(QStringLiteral(" ("))) fitted = fitted.section(QStringLiteral(" ("), 0, 0);
    if (fm.horizontalAdvance(fitted) > room) {
      // Two lines, broken at the space nearest the middle, where both fit ("output variance"
      // on a short panel: "output" over "variance", not "output var..."); else elided.
      const QString two = onTwoLines(fitted);
      const auto lines = two.split(QLatin1Char('\n'));
      const bool fits = lines.size() == 2 && fm.horizontalAdvance(lines[0]) <= room &&
                        fm.horizontalAdvance(lines[1]) <= room;
      fitted = fits ? two : fm.elidedText(fitted, Qt::ElideRight, std::max(0.0, room));
    }
    if (fitted != axis->label()) {
      axis->setLabel(fitted);
      changed = true;
    }
  }
  if (changed) layOut(plot);
}

void fitTitles(QCustomPlot* plot) {
  // A title takes the width of its column; it no longer widens the column to its text.
  std::vector<QCPTextElement*> titles;
  for (auto* element : plot->plotLayout()->elements(true)) {
    if (auto* title = qobject_cast<QCPTextElement*>(element)) {
      title->setMinimumSize(1, 0);
      titles.push_back(title);
    }
  }
  layOut(plot);
  bool changed = false;
  for (auto* title : titles) {
    // The full text is the one last fitted, unless the title was given a new text since.
    QString full = title->property("fullText").toString();
    if (full.isEmpty() || title->text() != title->property("fittedText").toString()) {
      full = title->text();
      title->setProperty("fullText", full);
    }
    const QFontMetricsF fm(title->font(), plot);
    const double room = title->outerRect().width() - title->margins().left() - title->margins().right() - 2;
    const QString fitted = fm.horizontalAdvance(full) <= room ? full : fm.elidedText(full, Qt::ElideRight, room);
    title->setProperty("fittedText", fitted);
    if (fitted != title->text()) {
      title->setText(fitted);
      changed = true;
    }
  }
  if (changed) layOut(plot);
}

namespace {

// After each resize, once the layout has settled: titles elided to their panel, the tick
// labels fitted again, starting from each axis's first tick count (a plot made larger gets its
// ticks back), then the legend placed.
class PlotFitter : public QObject {
 public:
  explicit PlotFitter(QCustomPlot* plot) : QObject(plot), m_plot(plot) {
    setObjectName(QStringLiteral("depthlabPlotFitter"));
    plot->installEventFilter(this);
  }
  bool eventFilter(QObject*, QEvent* e) override {
    if (e->type() == QEvent::Resize && !m_pending) {
      m_pending = true;
      QTimer::singleShot(0, this, [this] {
        m_pending = false;
        fit();
      });
    }
    return false;
  }

 private:
  void fit() {
    for (auto* axis : labelledAxes(m_plot)) {
      auto ticker = axis->ticker();
      if (!ticker || ticker.dynamicCast<QCPAxisTickerFixed>() || ticker.dynamicCast<QCPAxisTickerText>()) continue;
      const QVariant first = axis->property(kFirstTickCount);
      if (first.isValid()) ticker->setTickCount(first.toInt());
      else axis->setProperty(kFirstTickCount, ticker->tickCount());
    }
    fitTitles(m_plot);
    fitTickLabels(m_plot);
    if (m_plot->legend) placeLegend(m_plot, m_plot->axisRect(), LegendOutside::Right);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
  }
  static constexpr const char* kFirstTickCount = "depthlabFirstTickCount";
  QCustomPlot* m_plot;
  bool m_pending = false;
};

}  // namespace

void fitOnResize(QCustomPlot* plot) {
  // (PlotFitter has no meta-object of its own: found by name, not by qobject_cast)
  if (!plot->findChild<QObject*>(QStringLiteral("depthlabPlotFitter"), Qt::FindDirectChildrenOnly)) new PlotFitter(plot);
}

}  // namespace depthlab::ui::figures

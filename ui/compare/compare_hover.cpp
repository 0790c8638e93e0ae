// See compare_hover.h.
#include "compare/compare_hover.h"

#include <qcustomplot.h>

#include <QMouseEvent>
#include <QPointer>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace depthlab::ui::compare {

const store::ScalarPoint* nearestPoint(const std::vector<store::ScalarPoint>& points, double step) {
  if (points.empty()) return nullptr;
  auto it = std::lower_bound(
      points.begin(), points.end(), step,
      [](const store::ScalarPoint& p, double s) { return static_cast<double>(p.step) < s; });
  if (it == points.end()) return &points.back();
  if (it == points.begin()) return &*it;
  auto before = std::prev(it);
  return step - static_cast<double>(before->step) < static_cast<double>(it->step) - step ? &*before
                                                                                         : &*it;
}

QString stepHoverText(const std::vector<HoverRun>& runs, double step, double smoothing) {
  QStringList lines;
  lines << (smoothing > 0 ? QObject::tr("step %1 (train smoothed, EMA %2)")
                                .arg(std::llround(step))
                                .arg(smoothing)
                          : QObject::tr("step %1").arg(std::llround(step)));
  auto value = [](const char* name, const store::ScalarPoint* p) {
    return p ? QStringLiteral("%1 %2 at %3")
                   .arg(QLatin1String(name))
                   .arg(p->value, 0, 'g', 4)
                   .arg(p->step)
             : QStringLiteral("%1 \u2013").arg(QLatin1String(name));
  };
  for (const auto& r : runs) {
    lines << QStringLiteral("%1: %2 \u00b7 %3")
                 .arg(r.label, value("train", nearestPoint(r.train, step)),
                      value("val", nearestPoint(r.val, step)));
  }
  return lines.join(QLatin1Char('\n'));
}

void installStepHover(QCustomPlot* plot, std::function<QString(double)> textAt) {
  auto line = std::make_shared<QPointer<QCPItemStraightLine>>();
  auto hide = [plot, line] {
    if (*line && (*line)->visible()) {
      (*line)->setVisible(false);
      plot->replot(QCustomPlot::rpQueuedReplot);
    }
  };
  QObject::connect(plot, &QCustomPlot::mouseMove, plot, [plot, line, hide, textAt](QMouseEvent* e) {
    if (!plot->axisRect()->rect().contains(e->pos())) {
      hide();
      return;
    }
    const double step = plot->xAxis->pixelToCoord(e->pos().x());
    if (!*line) {  // (re)made: a plot's items may have been cleared since
      *line = new QCPItemStraightLine(plot);
      (*line)->setPen(QPen(QColor(90, 90, 90, 160), 1, Qt::DotLine));
      (*line)->setSelectable(false);
    }
    (*line)->point1->setCoords(step, 0);
    (*line)->point2->setCoords(step, 1);
    (*line)->setVisible(true);
    plot->replot(QCustomPlot::rpQueuedReplot);
    QToolTip::showText(e->globalPosition().toPoint(), textAt(step), plot);
  });
}

}  // namespace depthlab::ui::compare

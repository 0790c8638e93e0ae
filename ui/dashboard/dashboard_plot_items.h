// Plot items the group dashboard's layout and drawing share: the step cursor and crosshair
// lines, a run's scheme label. Used by group_dashboard.cpp and group_dashboard_draw.cpp only.
#pragma once

#include <qcustomplot.h>

#include <QString>

#include "dashboard/group_data.h"

namespace depthlab::ui::dashboard {

inline QString schemeOf(const RunData& r) { return QString::fromStdString(r.info.scheme); }

/// The vertical line item called `name` on the plot (made with `pen` the first time): the step
/// cursor, the mouse crosshair.
inline QCPItemStraightLine* namedLine(QCustomPlot* p, const QString& name, const QPen& pen) {
  for (int i = 0; i < p->itemCount(); ++i) {
    if (auto* l = qobject_cast<QCPItemStraightLine*>(p->item(i)); l && l->objectName() == name) return l;
  }
  auto* l = new QCPItemStraightLine(p);
  l->setObjectName(name);
  l->setPen(pen);
  l->setSelectable(false);
  return l;
}

inline QCPItemStraightLine* cursorLine(QCustomPlot* p) {
  return namedLine(p, QStringLiteral("cursor"), QPen(QColor(80, 80, 80, 160), 1, Qt::DashLine));
}

inline void placeCursor(QCustomPlot* p, double x) {
  auto* l = cursorLine(p);
  l->point1->setCoords(x, 0);
  l->point2->setCoords(x, 1);
}

}  // namespace depthlab::ui::dashboard

// Plot items the group dashboard's layout and drawing share: the step cursor line, a run's
// scheme label, and the effectiveness thresholds drawn on its panel. Used by
// group_dashboard.cpp and group_dashboard_draw.cpp only.
#pragma once

#include <qcustomplot.h>

#include <QString>

#include "dashboard/group_data.h"

namespace depthlab::ui::dashboard {

inline constexpr double kLazy = 0.05, kLow = 0.2;  // thresholds drawn on the effectiveness panel

inline QString schemeOf(const RunData& r) { return QString::fromStdString(r.info.scheme); }

inline QCPItemStraightLine* cursorLine(QCustomPlot* p) {
  for (int i = 0; i < p->itemCount(); ++i) {
    if (auto* l = qobject_cast<QCPItemStraightLine*>(p->item(i)); l && l->objectName() == QLatin1String("cursor")) return l;
  }
  auto* l = new QCPItemStraightLine(p);
  l->setObjectName(QStringLiteral("cursor"));
  l->setPen(QPen(QColor(80, 80, 80, 160), 1, Qt::DashLine));
  return l;
}

inline void placeCursor(QCustomPlot* p, double x) {
  auto* l = cursorLine(p);
  l->point1->setCoords(x, 0);
  l->point2->setCoords(x, 1);
}

}  // namespace depthlab::ui::dashboard

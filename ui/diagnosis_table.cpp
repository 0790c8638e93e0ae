// See diagnosis_table.h.
#include "diagnosis_table.h"

#include <QColor>
#include <QHeaderView>
#include <QTableWidget>

#include <cmath>

#include "store/metric_catalogue.h"

namespace depthlab::ui {

QString sig3(double v) {
  return std::isfinite(v) ? QString::number(v, 'g', 3) : QStringLiteral("\u2013");
}

QString proxyShortName(const std::string& key) {
  if (key == metrics::kAngularAdjacent) return QStringLiteral("angular d");
  if (key == metrics::kBlockInfluence) return QStringLiteral("BI");
  if (key == metrics::kEffectiveness) return QStringLiteral("E_l");
  return QString::fromStdString(key);
}

QString thresholdText(const probes::LayerThresholds& t) {
  return QObject::tr(
             "Thresholds, from this run's config: E_l below %1 is lazy, below %2 low, else "
             "effective (the classes the report counts). A grey \u0394 lies within two standard "
             "errors of 0: removing that layer changes the probe loss by less than the probe "
             "sequences resolve, so its order among such layers is noise. Rank 1 = the smallest "
             "value (the cheapest layer to drop, by each column).")
      .arg(sig3(t.lazy), sig3(t.low));
}

namespace {

QString classOf(double e, const probes::LayerThresholds& t) {
  if (!std::isfinite(e)) return QStringLiteral("\u2013");
  return e < t.lazy  ? QObject::tr("lazy")
         : e < t.low ? QObject::tr("low")
                     : QObject::tr("effective");
}

// Every row and column shown, no scroll bar of its own: the page scrolls instead.
void fitWhole(QTableWidget* t) {
  t->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  t->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  t->resizeColumnsToContents();
  t->resizeRowsToContents();
  int width = 2 * t->frameWidth(), height = 2 * t->frameWidth();
  for (int c = 0; c < t->columnCount(); ++c) width += t->columnWidth(c);
  for (int r = 0; r < t->rowCount(); ++r) height += t->rowHeight(r);
  height += t->horizontalHeader()->sizeHint().height();
  t->setFixedHeight(height);
  t->setMinimumWidth(width);
  t->setSizePolicy(QSizePolicy::Minimum, QSizePolicy::Fixed);
}

}  // namespace

QString diagnosisTitle(const DiagnosisRun& run) {
  return QObject::tr("%1 \u2014 layers to drop, at step %2").arg(run.label).arg(run.diagnosis.step);
}

QTableWidget* makeDiagnosisTable(const DiagnosisRun& run) {
  const auto& d = run.diagnosis;
  QStringList headers{QObject::tr("drop\nrank"), QObject::tr("layer"),
                      QObject::tr("pruning\n\u0394 loss"), QObject::tr("\u0394\ns.e.")};
  for (const auto& p : d.proxies) {
    const QString name = proxyShortName(p.key);
    headers << name << name + QObject::tr("\nrank");
  }
  headers << QObject::tr("E_l\nclass");
  auto* t = new QTableWidget(d.layers, headers.size());
  t->setObjectName(QStringLiteral("diagnosisTable:%1").arg(run.runId));
  t->setHorizontalHeaderLabels(headers);
  t->verticalHeader()->hide();
  t->setEditTriggers(QAbstractItemView::NoEditTriggers);
  const analysis::ProxyColumn* effectiveness = nullptr;
  for (const auto& p : d.proxies) {
    if (p.key == metrics::kEffectiveness) effectiveness = &p;
  }
  for (int r = 0; r < d.layers; ++r) {
    const int l = d.dropOrder[static_cast<size_t>(r)];
    const auto L = static_cast<size_t>(l);
    QStringList cells{sig3(d.pruningRanks[L]), QString::number(l + 1), sig3(d.pruning[L]),
                      sig3(L < d.pruningError.size() ? d.pruningError[L] : NAN)};
    for (const auto& p : d.proxies) cells << sig3(p.values[L]) << sig3(p.ranks[L]);
    cells << classOf(effectiveness ? effectiveness->values[L] : NAN, run.thresholds);
    for (int c = 0; c < cells.size(); ++c) {
      auto* item = new QTableWidgetItem(cells[c]);
      item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      if (c == 2 && d.withinNoise(l)) item->setForeground(QColor(128, 128, 128));
      t->setItem(r, c, item);
    }
  }
  fitWhole(t);
  return t;
}

}  // namespace depthlab::ui

// See family_figures.h.
#include "export/family_figures.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

#include "experiment/family_table.h"
#include "export/figure_csv.h"

namespace depthlab::ui {

void buildFamilyProfile(QCustomPlot* plot, const experiment::FamilyTable& table,
                        const QStringList& labels, const FigureStyle& style, bool pruning,
                        FigureCsv& csv, QStringList& warnings) {
  csv.header = {QStringLiteral("run"), QStringLiteral("layer"), QStringLiteral("relative_depth"),
                pruning ? QStringLiteral("delta_loss") : QStringLiteral("angular_to_next"),
                QStringLiteral("standard_error")};
  const auto colours = paletteColors(style.palette);
  const QCPScatterStyle::ScatterShape shapes[] = {QCPScatterStyle::ssCircle, QCPScatterStyle::ssSquare,
                                                  QCPScatterStyle::ssTriangle, QCPScatterStyle::ssDiamond,
                                                  QCPScatterStyle::ssCross, QCPScatterStyle::ssPlus};
  plot->xAxis->setLabel(QStringLiteral("relative depth l / L"));
  plot->yAxis->setLabel(pruning ? QStringLiteral("loss increase, l removed")
                                : QStringLiteral("angular distance to l + 1"));
  plot->legend->setVisible(true);
  double lo = 0, hi = 0;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    const auto& r = table.rows[i];
    const auto& values = pruning ? r.pruneDelta : r.angularNext;
    // An imported model says its family and depth; a run trained here keeps the label every
    // other figure gives it.
    QString label = labels.value(static_cast<int>(i));
    if (!r.architecture.empty()) {
      label += QStringLiteral(" (%1, L = %2)").arg(QString::fromStdString(r.family)).arg(r.nLayers);
    }
    if (values.empty() || r.nLayers <= 0) {
      warnings << QStringLiteral("run %1 has no %2 probe (depthlab-cli analyze --run %1)")
                      .arg(r.runId)
                      .arg(pruning ? QStringLiteral("pruning") : QStringLiteral("angular distance"));
      continue;
    }
    const bool withErrors = pruning && r.pruneDeltaError.size() == values.size();
    QVector<double> x, y, e;
    for (size_t l = 0; l < values.size(); ++l) {
      const double rel = double(l + 1) / double(r.nLayers);
      const double err = withErrors ? r.pruneDeltaError[l] : std::nan("");
      csv.integer(r.runId).integer(static_cast<int64_t>(l) + 1).value(rel).value(values[l]).value(err).endRow();
      if (!std::isfinite(values[l])) continue;
      x << rel;
      y << values[l];
      e << (std::isfinite(err) ? err : 0.0);
      lo = std::min(lo, values[l] - e.back());
      hi = std::max(hi, values[l] + e.back());
    }
    auto* g = plot->addGraph(plot->xAxis, plot->yAxis);
    const QColor c = colours.empty() ? QColor(Qt::black) : colours[i % colours.size()];
    g->setPen(QPen(c, style.lineWidth));
    g->setScatterStyle(QCPScatterStyle(shapes[i % std::size(shapes)], c, c, 3 + style.lineWidth));
    g->setData(x, y, true);
    g->setName(label);
    if (withErrors) {
      auto* bars = new QCPErrorBars(plot->xAxis, plot->yAxis);
      bars->setDataPlottable(g);
      bars->setData(e);
      bars->setPen(QPen(c, style.lineWidth * 0.6));
      bars->removeFromLegend();
    }
  }
  plot->xAxis->setRange(0, 1.02);
  const double pad = (hi - lo) * 0.08 + 1e-9;
  plot->yAxis->setRange(pruning ? lo - pad : 0, hi + pad);
}

}  // namespace depthlab::ui

// GroupDashboard's drawing: loss and lr, the per-layer variance, angular and pruning panels,
// and the panels that follow the step cursor; see group_dashboard.h.
#include "dashboard/group_dashboard.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QScrollArea>
#include <QSlider>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>

#include "dashboard/dashboard_plot_items.h"
#include "dashboard/panel_specs.h"
#include "plot/colormaps.h"
#include "plot/figure_builders.h"
#include "plot/plot_helpers.h"
#include "plot/series_adapter.h"
#include "store/metric_catalogue.h"

namespace depthlab::ui {

namespace {

// The colour bar's label of a heatmap panel: the catalogue's label (and unit) of what it draws.
QString scaleLabel(const QString& panel) {
  const auto* spec = dashboard::panelSpec(panel);
  if (!spec || spec->metrics.empty()) return QString();
  const std::string key = spec->metrics.front().toStdString();
  for (auto kind : {metrics::Kind::PerLayer, metrics::Kind::Matrix, metrics::Kind::Scalar}) {
    if (const auto* m = metrics::find(key, kind)) {
      QString label = QString::fromUtf8(m->label.data(), static_cast<int>(m->label.size()));
      if (!m->unit.empty()) {
        label += QStringLiteral(" (%1)").arg(QString::fromUtf8(m->unit.data(), static_cast<int>(m->unit.size())));
      }
      return label;
    }
  }
  return QString();
}

}  // namespace

using dashboard::colorMapOf;
using dashboard::kLazy;
using dashboard::kLow;
using dashboard::placeCursor;
using dashboard::schemeOf;

void GroupDashboard::drawLoss() {
  auto* loss = m_plots.count(QStringLiteral("loss")) ? m_plots[QStringLiteral("loss")] : nullptr;
  auto* lr = m_plots.count(QStringLiteral("lr")) ? m_plots[QStringLiteral("lr")] : nullptr;
  if (!loss || !lr) return;
  const bool keepX = userZoomed(loss);
  loss->clearGraphs();
  lr->clearGraphs();
  loss->yAxis->setScaleType(m_logY->isChecked() ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
  const double alpha = m_smoothing->value() / 100.0;
  const int columns = std::max(200, loss->axisRect()->width());
  const double x0 = keepX ? loss->xAxis->range().lower : 0;
  const double x1 = keepX ? loss->xAxis->range().upper : static_cast<double>(std::max<int64_t>(1, m_data.lastStep()));
  // Losses as the paper figure draws them, smoothed, with the raw curve faint beneath.
  std::vector<figures::LossRun> runs;
  for (const auto& r : m_data.runs()) {
    runs.push_back({schemeOf(r), schemeColor(schemeOf(r)), Qt::SolidLine,
                    r.scalars.at(metrics::kLossTrain), r.scalars.at(metrics::kLossVal)});
  }
  figures::LossStyle style;
  style.smoothing = alpha;
  style.rawUnderSmoothed = true;
  style.columns = columns;
  style.window = std::make_pair(x0, x1);
  m_decimationNotes << figures::lossOverlay(loss->xAxis, loss->yAxis, runs, style);
  for (const auto& r : m_data.runs()) {
    const auto& pts = r.scalars.at(metrics::kLr);
    if (pts.empty()) continue;
    auto* g = lr->addGraph();
    g->setName(schemeOf(r));
    g->setPen(QPen(schemeColor(schemeOf(r)), 1.4));
    setGraphData(g, decimateMinMax(pts, x0, x1, columns));
    g->removeFromLegend();
  }
  if (!keepX) loss->rescaleAxes();
  else loss->yAxis->rescale();
  if (!userZoomed(lr)) lr->rescaleAxes();
  placeCursor(loss, static_cast<double>(m_cursor));
  loss->replot(QCustomPlot::rpQueuedReplot);
  lr->replot(QCustomPlot::rpQueuedReplot);
}

void GroupDashboard::drawLayerPanels() {
  // Shared colour ranges across schemes, so Pre-LN and LNS are compared on one scale.
  std::map<QString, std::pair<double, double>> ranges;
  auto widen = [&](const QString& key, std::pair<double, double> r) {
    auto it = ranges.find(key);
    if (it == ranges.end()) ranges[key] = r;
    else it->second = {std::min(it->second.first, r.first), std::max(it->second.second, r.second)};
  };
  std::vector<std::pair<QCPColorMap*, QString>> maps;
  double varMax = 0;
  for (const auto& r : m_data.runs()) {
    const QString s = schemeOf(r);
    // Variance curves: one per layer, sequential colours.
    if (auto* p = m_plots[QStringLiteral("variance:") + s]) {
      const bool keep = userZoomed(p);
      p->clearGraphs();
      const auto& v = r.layers.at(metrics::kVariance);
      std::optional<std::pair<double, double>> window;
      if (keep) window = std::make_pair(p->xAxis->range().lower, p->xAxis->range().upper);
      varMax = std::max(varMax, figures::layerCurves(p->xAxis, p->yAxis, v, 1.3,
                                                     std::max(200, p->axisRect()->width()), window));
      // Legend by layer: a colour bar layer 1..L beside the curves (the curves use the same
      // sequential colours), compact at any depth; hover a curve for its exact layer.
      p->legend->setVisible(false);
      if (v.nLayers > 0) figures::layerColourBar(p, v.nLayers, 1, 1);  // row 0 holds the title
      if (!keep) p->rescaleAxes();
      placeCursor(p, static_cast<double>(m_cursor));
    }
    struct Heat { const char* prefix; const char* metric; };
    for (auto h : {Heat{"variance_map", metrics::kVariance},
                   Heat{"angular_map", metrics::kAngularAdjacent},
                   Heat{"prune_map", metrics::kPruneDelta}}) {
      if (auto* p = m_plots[QLatin1String(h.prefix) + QLatin1Char(':') + s]) {
        const auto heat = figures::layerHeatmap(p->xAxis, p->yAxis, r.layers.at(h.metric), 800);
        widen(QLatin1String(h.prefix), heat.range);
        maps.emplace_back(heat.map, QLatin1String(h.prefix));
        if (!userZoomed(p)) p->rescaleAxes();
        placeCursor(p, static_cast<double>(m_cursor));
      }
    }
  }
  for (auto& [map, key] : maps) {
    map->setDataRange(QCPRange(ranges[key].first, ranges[key].second));
    figures::heatmapColourBar(map, scaleLabel(key), 1, 1);  // row 0 holds the title
  }
  // Same y range for the variance curves of every scheme.
  for (const auto& s : m_schemes) {
    if (auto* p = m_plots[QStringLiteral("variance:") + s]; p && !userZoomed(p) && varMax > 0) {
      p->yAxis->setRange(0, varMax * 1.05);
    }
  }
  for (auto& [name, p] : m_plots) {
    if (name.contains(QLatin1Char(':'))) p->replot(QCustomPlot::rpQueuedReplot);
  }
}

void GroupDashboard::drawCursorPanels() {
  auto bars = [&](const QString& plotName, const char* metric, bool thresholds) {
    auto it = m_plots.find(plotName);
    if (it == m_plots.end()) return;
    auto* p = it->second;
    p->clearPlottables();
    p->clearItems();
    std::vector<figures::BarSeries> series;
    for (const auto& r : m_data.runs()) {
      figures::BarSeries b{schemeOf(r), schemeColor(schemeOf(r)),
                           layerValuesAt(r.layers.at(metric), m_cursor)};
      if (thresholds && !b.values.empty()) {
        int lazy = 0;
        for (float v : b.values) lazy += v < kLazy;
        b.name += tr(" (%1 lazy)").arg(lazy);
      }
      series.push_back(std::move(b));
    }
    const int L = figures::layerBars(p->xAxis, p->yAxis, series);
    if (thresholds && L > 0) {
      for (double t : {kLazy, kLow}) {
        auto* line = new QCPItemStraightLine(p);
        line->point1->setCoords(0, t);
        line->point2->setCoords(1, t);
        line->setPen(QPen(QColor(192, 57, 43), 1, Qt::DashLine));
      }
    }
    if (!userZoomed(p)) {
      p->rescaleAxes();
      p->xAxis->setRange(0.4, std::max(1, L) + 0.6);
    }
    p->replot(QCustomPlot::rpQueuedReplot);
  };
  bars(QStringLiteral("prune_bars"), metrics::kPruneDelta, false);
  bars(QStringLiteral("effectiveness"), metrics::kEffectiveness, true);
  bars(QStringLiteral("grad_norm"), metrics::kLayerGradNorm, false);
  // Gromov block pruning (stored at the end of a run, or by `analyze`).
  for (const auto& r : m_data.runs()) {
    auto it = m_plots.find(QStringLiteral("block_prune:") + schemeOf(r));
    if (it == m_plots.end()) continue;
    if (r.blockPrune) {
      auto heat = figures::matrixHeatmap(it->second->xAxis, it->second->yAxis, *r.blockPrune, false,
                                         false);
      figures::heatmapColourBar(heat.map, scaleLabel(QStringLiteral("block_prune")), 1, 1);
      if (!userZoomed(it->second)) it->second->rescaleAxes();
    } else {
      colorMapOf(it->second)->data()->clear();
    }
    it->second->replot(QCustomPlot::rpQueuedReplot);
  }
  // The full (l, n) angular matrix at the cursor step, read from the store snapshot.
  for (const auto& r : m_data.runs()) {
    auto it = m_plots.find(QStringLiteral("angular_ln:") + schemeOf(r));
    if (it == m_plots.end()) continue;
    auto* p = it->second;
    if (const auto* m = r.angularAt(m_cursor)) {
      auto heat = figures::matrixHeatmap(p->xAxis, p->yAxis, *m, m_rowNormalize->isChecked(),
                                         /*reversedColours=*/true);
      figures::heatmapColourBar(heat.map,
                                scaleLabel(QStringLiteral("angular_ln")) +
                                    (m_rowNormalize->isChecked() ? tr(", row-normalised") : QString()),
                                1, 1);
      if (!userZoomed(p)) p->rescaleAxes();
    } else {
      colorMapOf(p)->data()->clear();
    }
    p->replot(QCustomPlot::rpQueuedReplot);
  }
  for (auto& [name, p] : m_plots) {
    if (name.startsWith(QLatin1String("variance:")) || name.endsWith(QLatin1String("_map")) ||
        name.contains(QLatin1String("_map:")) || name == QLatin1String("loss")) {
      placeCursor(p, static_cast<double>(m_cursor));
      p->replot(QCustomPlot::rpQueuedReplot);
    }
  }
}

}  // namespace depthlab::ui

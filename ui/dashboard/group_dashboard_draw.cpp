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

using dashboard::kLazy;
using dashboard::kLow;
using dashboard::placeCursor;
using dashboard::schemeOf;

void GroupDashboard::drawLoss() {
  auto plotOf = [this](dashboard::PanelKind kind) -> QCustomPlot* {
    const auto specs = dashboard::panelsOfKind(kind);
    if (specs.empty()) return nullptr;
    auto it = m_plots.find(specs.front()->key);
    return it == m_plots.end() ? nullptr : it->second;
  };
  auto* loss = plotOf(dashboard::PanelKind::LossOverlay);
  auto* lr = plotOf(dashboard::PanelKind::LearningRate);
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
  using dashboard::PanelKind;
  // Shared colour ranges across schemes, so Pre-LN and LNS are compared on one scale.
  std::map<QString, std::pair<double, double>> ranges;
  std::vector<std::pair<QCPColorMap*, QString>> maps;
  std::map<QString, double> curvesMax;  // per curves panel, across schemes
  for (const auto& r : m_data.runs()) {
    const QString s = schemeOf(r);
    for (const auto* spec : dashboard::panelsOfKind(PanelKind::LayerCurves)) {
      auto it = m_plots.find(spec->key + QLatin1Char(':') + s);
      if (it == m_plots.end()) continue;
      auto* p = it->second;
      const bool keep = userZoomed(p);
      p->clearGraphs();
      const auto& v = r.layers.at(spec->metrics.front().toStdString());
      std::optional<std::pair<double, double>> window;
      if (keep) window = std::make_pair(p->xAxis->range().lower, p->xAxis->range().upper);
      double& top = curvesMax[spec->key];
      top = std::max(top, figures::layerCurves(p->xAxis, p->yAxis, v, 1.3,
                                               std::max(200, p->axisRect()->width()), window));
      // Legend by layer: a colour bar layer 1..L beside the curves (the curves use the same
      // sequential colours), compact at any depth; hover a curve for its exact layer.
      p->legend->setVisible(false);
      if (v.nLayers > 0) figures::layerColourBar(p, v.nLayers, 1, 1);  // row 0 holds the title
      if (!keep) p->rescaleAxes();
    }
    for (const auto* spec : dashboard::panelsOfKind(PanelKind::LayerHeatmap)) {
      auto it = m_plots.find(spec->key + QLatin1Char(':') + s);
      if (it == m_plots.end()) continue;
      auto* p = it->second;
      const auto heat = figures::layerHeatmap(p->xAxis, p->yAxis,
                                              r.layers.at(spec->metrics.front().toStdString()), 800);
      auto [range, fresh] = ranges.try_emplace(spec->key, heat.range);
      if (!fresh) {
        range->second = {std::min(range->second.first, heat.range.first),
                         std::max(range->second.second, heat.range.second)};
      }
      maps.emplace_back(heat.map, spec->key);
      if (!userZoomed(p)) p->rescaleAxes();
    }
  }
  for (auto& [map, key] : maps) {
    map->setDataRange(QCPRange(ranges[key].first, ranges[key].second));
    figures::heatmapColourBar(map, scaleLabel(key), 1, 1);  // row 0 holds the title
  }
  // Same y range for a curves panel of every scheme.
  for (const auto& [key, top] : curvesMax) {
    for (const auto& s : m_schemes) {
      auto it = m_plots.find(key + QLatin1Char(':') + s);
      if (it != m_plots.end() && !userZoomed(it->second) && top > 0) {
        it->second->yAxis->setRange(0, top * 1.05);
      }
    }
  }
  for (auto& [name, p] : m_plots) {
    if (name.contains(QLatin1Char(':'))) p->replot(QCustomPlot::rpQueuedReplot);
  }
}

void GroupDashboard::drawCursorPanels() {
  auto bars = [&](const QString& plotName, const std::string& metric, bool thresholds) {
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
  for (const auto* spec : dashboard::panelsOfKind(dashboard::PanelKind::LayerBarsAtCursor)) {
    bars(spec->key, spec->metrics.front().toStdString(), spec->thresholds);
  }
  // Gromov block pruning (stored at the end of a run, or by `analyze`).
  // The (l, n) matrices: block pruning at the end of a run (stored at the end, or by `analyze`)
  // and the angular distance at the cursor step.
  auto matrices = [&](dashboard::PanelKind kind, auto matrixOf, bool rowNormalise, bool reversed,
                      const QString& labelSuffix) {
    for (const auto* spec : dashboard::panelsOfKind(kind)) {
      for (const auto& r : m_data.runs()) {
        auto it = m_plots.find(spec->key + QLatin1Char(':') + schemeOf(r));
        if (it == m_plots.end()) continue;
        auto* p = it->second;
        if (const store::Matrix* m = matrixOf(r)) {
          auto heat = figures::matrixHeatmap(p->xAxis, p->yAxis, *m, rowNormalise, reversed);
          figures::heatmapColourBar(heat.map, scaleLabel(spec->key) + labelSuffix, 1, 1);
          if (!userZoomed(p)) p->rescaleAxes();
        } else {
          figures::colourMapOn(p->xAxis, p->yAxis)->data()->clear();
        }
        p->replot(QCustomPlot::rpQueuedReplot);
      }
    }
  };
  matrices(dashboard::PanelKind::MatrixAtEnd,
           [](const RunData& r) { return r.blockPrune ? &*r.blockPrune : nullptr; }, false, false,
           QString());
  const bool rowNormalise = m_rowNormalize->isChecked();
  matrices(dashboard::PanelKind::MatrixAtCursor,
           [this](const RunData& r) { return r.angularAt(m_cursor); }, rowNormalise, true,
           rowNormalise ? tr(", row-normalised") : QString());
  for (auto& [name, p] : m_plots) {
    const auto* spec = dashboard::panelSpec(name);
    if (spec && spec->followsCursor) {
      placeCursor(p, static_cast<double>(m_cursor));
      p->replot(QCustomPlot::rpQueuedReplot);
    }
  }
}

}  // namespace depthlab::ui

// GroupDashboard's drawing: loss and lr, the per-layer variance, angular and pruning panels,
// and the panels that follow the step cursor; see group_dashboard.h.
#include "dashboard/group_dashboard.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QFontMetricsF>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QScrollArea>
#include <QSlider>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include <QComboBox>
#include <QProgressBar>

#include "analysis/layer_diagnosis.h"
#include "dashboard/dashboard_plot_items.h"
#include "dashboard/diagnosis_panel.h"
#include "dashboard/panel_specs.h"
#include "experiment/run_cost.h"
#include "plot/axis_fit.h"
#include "plot/colormaps.h"
#include "plot/figure_builders.h"
#include "plot/figure_layout.h"
#include "plot/live_plot.h"
#include "plot/plot_helpers.h"
#include "plot/series_adapter.h"
#include "probes/lazy_layers.h"
#include "store/metric_catalogue.h"

namespace depthlab::ui {

namespace {

// The colour bar's label of a heatmap panel: the catalogue's label (and unit) of what it draws.
QString scaleLabel(const QString& panel) {
  const auto* spec = dashboard::panelSpec(panel);
  return spec && !spec->metrics.empty() ? dashboard::metricLabel(spec->metrics.front()) : QString();
}

}  // namespace

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
  const QString axisMode = m_lossAxis->currentData().toString();
  const bool byStep = axisMode == QLatin1String("step");
  // Tokens read 100k, 1.5M (not 100000); steps and seconds stay plain numbers.
  figures::useCountTicks(loss->xAxis, axisMode == QLatin1String("tokens"));
  figures::useCountTicks(lr->xAxis, axisMode == QLatin1String("tokens"));
  // Decimation works in steps: a zoom in tokens or time decimates over every step.
  const double x0 = keepX && byStep ? loss->xAxis->range().lower : 0;
  const double x1 = keepX && byStep ? loss->xAxis->range().upper
                                    : static_cast<double>(std::max<int64_t>(1, m_data->lastStep()));
  // Losses as the paper figure draws them, smoothed, with the raw curve faint beneath.
  std::vector<figures::LossRun> runs;
  for (const auto& r : m_data->runs()) {
    figures::LossRun run{labelOf(schemeOf(r)),
                         schemeColor(schemeOf(r)),
                         Qt::SolidLine,
                         r.scalars.at(metrics::kLossTrain),
                         // a checkpoint series: its loss on the probe text at each checkpoint
                         r.scalars.at(r.series ? metrics::kLossProbe : metrics::kLossVal),
                         {}};
    if (!byStep) run.keyOf = r.axisMap(axisMode);
    runs.push_back(std::move(run));
  }
  figures::LossStyle style;
  style.smoothing = alpha;
  style.rawUnderSmoothed = true;
  style.columns = columns;
  style.window = std::make_pair(x0, x1);
  // One-pixel pens: the raster engine draws them on its fast path (wider ones go through the
  // stroker; exports re-render at their own widths, antialiased).
  style.trainWidth = 1.0;
  style.valWidth = 1.0;
  // Many runs (a depth study of every scheme): one legend entry a run, as Compare has, and the
  // axis says which lines are validation; two entries a run crushed the plot under its legend.
  const bool many = runs.size() > 4;
  style.valInLegend = !many;
  if (many) style.trainSuffix = QString();
  const bool allSeries = std::all_of(m_data->runs().begin(), m_data->runs().end(),
                                     [](const RunData& r) { return r.series; });
  if (allSeries) style.valSuffix = tr(" (probe text)");  // no validation split of ours
  loss->yAxis->setLabel(many ? tr("loss (dashed: val)") : tr("loss"));
  m_decimationNotes << figures::lossOverlay(loss->xAxis, loss->yAxis, runs, style);
  drawLearningRate(lr, std::make_pair(x0, x1), columns, axisMode);
  if (keepX) {
    loss->yAxis->rescale();
  } else {
    figures::fitLossAxes(loss->xAxis, loss->yAxis, runs);  // a divergence runs off the top
  }
  figures::placeLegend(loss, loss->axisRect(),
                       figures::LegendOutside::Right);  // a free corner, else beside
  if (byStep)
    placeCursor(loss, static_cast<double>(m_cursor));
  else
    placeCursor(loss, -1e300);  // the step cursor has no place on a tokens / time axis
  replotWhenShown(loss);
  replotWhenShown(lr);
}

void GroupDashboard::drawLearningRate(QCustomPlot* lr, std::pair<double, double> window,
                                      int columns, const QString& axisMode) {
  double low = INFINITY, high = -INFINITY;
  for (const auto& r : m_data->runs()) {
    const auto& pts = r.scalars.at(metrics::kLr);
    if (pts.empty()) continue;
    auto* g = lr->addGraph();
    g->setName(labelOf(schemeOf(r)));
    g->setPen(QPen(schemeColor(schemeOf(r)), 1.4));
    auto d = decimateMinMax(pts, window.first, window.second, columns);
    if (axisMode != QLatin1String("step")) {
      const auto map = r.axisMap(axisMode);
      for (auto& k : d.keys) k = map(k);
    }
    for (const auto& p : pts) low = std::min(low, p.value), high = std::max(high, p.value);
    setGraphData(g, d);
    g->removeFromLegend();
  }
  if (userZoomed(lr)) return;
  lr->rescaleAxes();
  // A constant rate (a watched loop's, often) from 0 to above it, not +-2 around it.
  if (low == high && high > 0) lr->yAxis->setRange(0, high * 1.25);
}

// An imported model is probed at one step: each per-layer panel is the profile over its layers
// (x = layer, with the standard error where the probe stores one), not curves or heatmaps over
// steps one column wide.
void GroupDashboard::drawSnapshotProfiles() {
  using dashboard::PanelKind;
  for (auto& [name, p] : m_plots) {
    const auto* spec = dashboard::panelSpec(name);
    if (!spec || (spec->kind != PanelKind::LayerCurves && spec->kind != PanelKind::LayerHeatmap))
      continue;
    p->clearPlottables();
    const QString scheme = name.section(QLatin1Char(':'), 1);
    const std::string metric = spec->metrics.front().toStdString();
    for (const auto& r : m_data->runs()) {
      auto lit = r.layers.find(metric);
      if (schemeOf(r) != scheme || lit == r.layers.end() || lit->second.steps.empty()) continue;
      int64_t at = -1;
      const auto values = layerValuesAt(lit->second, INT64_MAX, &at);
      QVector<double> x, y;
      for (size_t l = 0; l < values.size(); ++l) x << double(l + 1), y << double(values[l]);
      auto* g = p->addGraph(p->xAxis, p->yAxis);
      const QColor c = schemeColor(scheme);
      g->setPen(QPen(c, 1.5));
      g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, c, c, 5));
      g->setData(x, y, true);
      g->setName(labelOf(scheme));
      if (auto eit = r.layers.find(dashboard::errorMetricOf(metric)); eit != r.layers.end()) {
        figures::addErrorBars(g, layerValuesExactlyAt(eit->second, at), QPen(c, 1));
      }
    }
    if (spec->kind == PanelKind::LayerHeatmap) p->yAxis->setLabel(scaleLabel(name));  // not "layer"
    auto ticker = QSharedPointer<QCPAxisTickerFixed>(new QCPAxisTickerFixed);
    ticker->setTickStep(1);  // whole layers (multiples of one on deep models)
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    p->xAxis->setTicker(ticker);
    setLogScale(p->yAxis, m_logLayers->isChecked() && dashboard::logAxis(*spec));
    if (!userZoomed(p)) figures::fitLayerProfileAxes(p->xAxis, p->yAxis, 0.5);
    replotWhenShown(p);
  }
}

void GroupDashboard::drawLayerCurves() {
  using dashboard::PanelKind;
  if (m_data->progress().imported) return;            // drawSnapshotProfiles draws them
  std::map<QString, std::vector<double>> curvesTops;  // per curves panel: each run's largest value
  for (const auto& r : m_data->runs()) {
    const QString s = schemeOf(r);
    for (const auto* spec : dashboard::panelsOfKind(PanelKind::LayerCurves)) {
      auto it = m_plots.find(spec->key + QLatin1Char(':') + s);
      if (it == m_plots.end()) continue;
      auto* p = it->second;
      const bool keep = userZoomed(p);
      p->clearGraphs();
      const std::string metric = spec->metrics.front().toStdString();
      const auto& v = r.layers.at(metric);
      std::optional<std::pair<double, double>> window;
      if (keep) window = std::make_pair(p->xAxis->range().lower, p->xAxis->range().upper);
      const auto oit = r.overview.find(metric);  // assembled by the loader, off the GUI thread
      curvesTops[spec->key].push_back(
          figures::layerCurves(p->xAxis, p->yAxis, v, 1.0, std::max(200, p->axisRect()->width()),
                               window, oit == r.overview.end() ? nullptr : &oit->second));
      // Legend by layer: a colour bar layer 1..L beside the curves (the curves use the same
      // sequential colours), compact at any depth; hover a curve for its exact layer.
      p->legend->setVisible(false);
      p->legend->clearItems();  // a hidden legend is still laid out: 24 entries measured per replot
      if (v.nLayers > 0) figures::layerColourBar(p, v.nLayers, 1, 1);  // row 0 holds the title
      if (!keep) p->xAxis->rescale();
      replotWhenShown(p);
    }
  }
  // One value scale for a curves panel of every scheme, by the spec's rule (the paper figure's):
  // linear from 0, or logarithmic when asked or when one run's values dwarf another's tenfold.
  for (const auto& [key, tops] : curvesTops) {
    const auto* spec = dashboard::panelSpec(key);
    const bool log = spec && dashboard::sharedScaleIsLog(*spec, tops, m_logLayers->isChecked());
    const double top = tops.empty() ? 0 : *std::max_element(tops.begin(), tops.end());
    for (const auto& s : m_schemes) {
      auto it = m_plots.find(key + QLatin1Char(':') + s);
      if (it == m_plots.end()) continue;
      setLogScale(it->second->yAxis, log);
      if (userZoomed(it->second)) continue;
      if (log)
        it->second->yAxis->rescale();
      else if (top > 0)
        it->second->yAxis->setRange(0, top * 1.05);
      else
        it->second->yAxis->rescale();
    }
  }
}

void GroupDashboard::drawLayerHeatmaps(const dashboard::PanelSpec* only) {
  using dashboard::PanelKind;
  if (m_data->progress().imported) return;
  // Shared colour ranges across schemes, so Pre-LN and LNS are compared on one scale.
  std::map<QString, std::vector<figures::Heatmap>> maps;  // per heatmap panel key
  for (const auto& r : m_data->runs()) {
    const QString s = schemeOf(r);
    for (const auto* spec : dashboard::panelsOfKind(PanelKind::LayerHeatmap)) {
      if (only && spec != only) continue;
      auto it = m_plots.find(spec->key + QLatin1Char(':') + s);
      if (it == m_plots.end()) continue;
      auto* p = it->second;
      const std::string metric = spec->metrics.front().toStdString();
      maps[spec->key].push_back(
          figures::layerHeatmap(p->xAxis, p->yAxis, r.layers.at(metric), 800, metric));
      if (!userZoomed(p)) p->rescaleAxes();
    }
  }
  for (auto& [key, group] : maps) {
    figures::shareColourRange(group);  // one scale per panel row, log / diverging by metric
    for (auto& h : group) {
      figures::heatmapColourBar(h.map, scaleLabel(key), 1, 1);  // row 0: title
      replotWhenShown(h.map->parentPlot());
    }
  }
}

// One per-layer bar panel at the cursor: each run's values at its last measured step at or
// before it, pruning's standard errors, and (thresholds) the runs' own lazy / low lines.
void GroupDashboard::drawBarsAtCursor(const dashboard::PanelSpec& spec, const std::string& metric,
                                      bool thresholds) {
  auto it = m_plots.find(spec.key);
  if (it == m_plots.end()) return;
  auto* p = it->second;
  p->clearPlottables();
  for (int i = p->itemCount() - 1; i >= 0; --i) {  // the thresholds go; the crosshair stays
    if (p->item(i)->objectName().isEmpty()) p->removeItem(i);
  }
  std::vector<figures::BarSeries> series;
  std::vector<double> lines;  // the runs' thresholds, each value once
  int64_t shown = -1;         // the step the bars come from (the last measured <= the cursor)
  QStringList runSteps;       // each run's, in run order, when they differ (a run trained further)
  for (const auto& r : m_data->runs()) {
    int64_t found = -1;
    auto lit = r.layers.find(metric);
    figures::BarSeries b{
        labelOf(schemeOf(r)),
        schemeColor(schemeOf(r)),
        lit == r.layers.end() ? std::vector<float>{} : layerValuesAt(lit->second, m_cursor, &found),
        {}};
    shown = std::max(shown, found);
    if (found >= 0) runSteps << QString::number(found);
    // Pruning deltas carry their standard error (over the probe sequences) from that step.
    if (auto eit = r.layers.find(dashboard::errorMetricOf(metric));
        eit != r.layers.end() && found >= 0) {
      auto errors = layerValuesExactlyAt(eit->second, found);
      if (errors.size() == b.values.size()) b.errors = std::move(errors);
    }
    if (thresholds && !b.values.empty()) {  // by the run's own thresholds, as `report` counts
      b.name += tr(" (%1 lazy)").arg(probes::classifyLayers(b.values, r.thresholds).lazy);
      for (double t : {r.thresholds.lazy, r.thresholds.low}) {
        if (std::find(lines.begin(), lines.end(), t) == lines.end()) lines.push_back(t);
      }
    }
    series.push_back(std::move(b));
  }
  const int L = figures::layerBars(p->xAxis, p->yAxis, series);
  // The step goes on a line of its own where the title would run past the axis (the
  // panels of a three-panel row are about 170 px tall).
  runSteps.removeDuplicates();
  const QString when = shown < 0 ? tr("(not measured by step %1)").arg(m_cursor)
                       : runSteps.size() > 1
                           ? tr("at steps %1").arg(runSteps.join(QStringLiteral(" / ")))
                           : tr("at step %1").arg(shown);
  // Chosen again before each replot: a resize lays the panel out after this draw.
  figures::setAxisTitleToFit(p->yAxis, spec.yLabel + QLatin1Char(' ') + when,
                             spec.yLabel + QLatin1Char('\n') + when);
  setLogScale(p->yAxis, m_logLayers->isChecked() && dashboard::logAxis(spec));
  if (thresholds && L > 0) {
    for (double t : lines) {
      auto* line = new QCPItemStraightLine(p);
      line->point1->setCoords(0, t);
      line->point2->setCoords(1, t);
      line->setPen(QPen(QColor(192, 57, 43), 1, Qt::DashLine));
    }
  }
  if (!userZoomed(p)) {
    figures::fitLayerBarAxes(p->xAxis, p->yAxis, L,
                             thresholds && L > 0 ? lines : std::vector<double>{});
  }
  figures::placeLegend(p, p->axisRect(), figures::LegendOutside::Right);
  replotWhenShown(p);
}

// The (l, n) matrix panels of `kind`, one colour scale across the runs' panels.
void GroupDashboard::drawMatrixPanels(dashboard::PanelKind kind, const MatrixOf& matrixOf,
                                      const MatrixOf& errorsOf, bool rowNormalise,
                                      const QString& labelSuffix) {
  for (const auto* spec : dashboard::panelsOfKind(kind)) {
    std::vector<figures::Heatmap> row;  // one colour scale across the runs' panels
    const std::string metric = spec->metrics.front().toStdString();
    for (const auto& r : m_data->runs()) {
      auto it = m_plots.find(spec->key + QLatin1Char(':') + schemeOf(r));
      if (it == m_plots.end()) continue;
      auto* p = it->second;
      if (const store::Matrix* m = matrixOf(r, metric)) {
        row.push_back(figures::matrixHeatmap(p->xAxis, p->yAxis, *m, rowNormalise, metric));
        const store::Matrix* errors = errorsOf(r, metric);
        setCellErrors(row.back().map, errors && errors->rows == m->rows && errors->cols == m->cols
                                          ? errors
                                          : nullptr);
        if (!userZoomed(p)) p->rescaleAxes();
      } else {
        figures::colourMapOn(p->xAxis, p->yAxis)->data()->clear();
        replotWhenShown(p);
      }
    }
    figures::shareColourRange(row);
    for (const auto& heat : row) {
      figures::heatmapColourBar(heat.map, scaleLabel(spec->key) + labelSuffix, 1, 1);
      replotWhenShown(heat.map->parentPlot());
    }
  }
}

void GroupDashboard::drawCursorPanels() {
  drawCursorBars();
  drawCursorMatrices();
}

void GroupDashboard::drawCursorBars() {
  for (const auto* spec : dashboard::panelsOfKind(dashboard::PanelKind::LayerBarsAtCursor)) {
    drawBarsAtCursor(*spec, spec->metrics.front().toStdString(), spec->thresholds);
  }
}

void GroupDashboard::drawCursorMatrices() {
  // The (l, n) matrices: block pruning at the end of a run (stored at the end, or by `analyze`)
  // and the angular distance at the cursor step.
  auto latest = [](const std::optional<store::Matrix>& m) { return m ? &*m : nullptr; };
  drawMatrixPanels(
      dashboard::PanelKind::MatrixAtEnd,
      [latest](const RunData& r, const std::string& metric) {
        return latest(metric == metrics::kSkipEffect ? r.skipEffect : r.blockPrune);
      },
      [latest](const RunData& r, const std::string& metric) {
        return metric == metrics::kBlockPrune ? latest(r.blockPruneError) : nullptr;
      },
      false, QString());
  const bool rowNormalise = m_rowNormalize->isChecked();
  drawMatrixPanels(
      dashboard::PanelKind::MatrixAtCursor,
      [this](const RunData& r, const std::string&) { return r.angularAt(m_cursor); },
      [](const RunData&, const std::string&) -> const store::Matrix* { return nullptr; },
      rowNormalise, rowNormalise ? tr(", row-normalised") : QString());
  for (auto& [name, p] : m_plots) {
    const auto* spec = dashboard::panelSpec(name);
    if (spec && spec->followsCursor) {
      placeCursor(p, static_cast<double>(m_cursor));
      replotWhenShown(p);
    }
  }
}

}  // namespace depthlab::ui

namespace depthlab::ui {

void GroupDashboard::drawProgress() {
  const auto p = m_data->progress();
  if (m_lossSection) m_lossSection->setVisible(!p.imported);
  for (QWidget* w : {static_cast<QWidget*>(m_scrubber), static_cast<QWidget*>(m_follow),
                     static_cast<QWidget*>(m_lossAxis), static_cast<QWidget*>(m_smoothing),
                     static_cast<QWidget*>(m_logY)}) {
    if (w) w->setVisible(!p.imported);  // one probe step: nothing to scrub, follow or smooth
  }
  if (p.imported) {
    m_progress->setRange(0, 1);
    m_progress->setValue(1);
    m_progress->setFormat(tr("imported model: probes only, no training"));
    m_eta->setText(QString());
    return;
  }
  m_progress->setRange(0, static_cast<int>(std::max<int64_t>(1, p.total)));
  m_progress->setValue(static_cast<int>(std::min(p.done, std::max<int64_t>(1, p.total))));
  m_progress->setFormat(tr("%1 / %2 steps").arg(p.done).arg(p.total));
  if (!p.running) {
    m_eta->setText(p.done >= p.total && p.total > 0 ? tr("done") : tr("not running"));
  } else if (p.etaSeconds) {
    m_eta->setText(
        tr("ETA %1").arg(QString::fromStdString(experiment::formatLongDuration(*p.etaSeconds))));
  } else {
    m_eta->setText(tr("ETA: measuring…"));
  }
}

void GroupDashboard::drawDiagnosis() {
  if (!m_diagnosis) return;
  std::vector<DiagnosisRun> runs;
  for (const auto& r : m_data->runs()) {
    auto d = analysis::diagnoseLayers(r.layers, m_cursor);
    d.runId = r.info.id;
    runs.push_back({r.info.id, labelOf(schemeOf(r)), std::move(d), r.thresholds});
  }
  m_diagnosis->setDiagnoses(runs);
}

}  // namespace depthlab::ui

// See paper_figures.h. The loss figure is in loss_figure.cpp.
#include "export/paper_figures.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "dashboard/panel_specs.h"
#include "experiment/run_config.h"
#include "experiment/run_report.h"
#include "export/figure_csv.h"
#include "export/paper_layout.h"
#include "plot/colormaps.h"
#include "plot/figure_builders.h"
#include "plot/plot_helpers.h"
#include "store/metric_catalogue.h"

namespace depthlab::ui {

namespace {

// A per-layer series of the run as the reader read it (empty when it has none).
const store::LayerSeries& layersOf(const RunMeta& r, const std::string& metric) {
  static const store::LayerSeries kNone;
  auto it = r.data->layers.find(metric);
  return it == r.data->layers.end() ? kNone : it->second;
}

}  // namespace

QColor nextRunColour(const RunMeta& run, const FigureStyle& style,
                     std::map<std::string, int>& perScheme) {
  return dashboard::runShade(schemeColor(QString::fromStdString(run.info.scheme), style.palette),
                             perScheme[run.info.scheme]++);
}

void buildVariance(QCustomPlot* plot, const std::vector<RunMeta>& runs, const FigureStyle& s,
                   FigureCsv& csv, QStringList& warnings) {
  csv.header = {QStringLiteral("run"), QStringLiteral("layer"), QStringLiteral("step"),
                QStringLiteral("variance")};
  // The dashboard's variance panel, drawn in paper style: its spec names the axis and rules the
  // scale.
  const auto* spec = dashboard::panelSpec(QStringLiteral("variance"));
  QStringList titles;
  for (const auto& r : runs) titles << r.label;
  const int columns = paper::panelColumns(static_cast<int>(runs.size()), s.widthPt);
  auto rects = paper::panelGrid(plot, titles, columns);
  double ymax = 0;
  double lowest = INFINITY;  // the smallest positive value of any panel
  std::vector<double> tops;  // each drawn panel's largest value
  int layers = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    auto* rect = rects[i];
    rect->axis(QCPAxis::atBottom)->setLabel(QStringLiteral("step"));
    rect->axis(QCPAxis::atLeft)
        ->setLabel(i % static_cast<size_t>(columns) == 0 ? spec->yLabel : QString());
    const auto& series = layersOf(runs[i], metrics::kVariance);
    if (series.steps.empty()) {
      warnings << QStringLiteral("run %1 has no variance probe").arg(runs[i].info.id);
      continue;
    }
    layers = std::max(layers, series.nLayers);
    // The dashboard's variance panel, every point kept (no pixel columns on paper).
    tops.push_back(figures::layerCurves(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft),
                                        series, s.lineWidth * 0.8));
    ymax = std::max(ymax, tops.back());
    for (float v : series.values) {
      if (v > 0 && std::isfinite(v)) lowest = std::min(lowest, static_cast<double>(v));
    }
    for (int l = 0; l < series.nLayers; ++l) {
      for (size_t k = 0; k < series.steps.size(); ++k) {
        const double v =
            series.values[k * static_cast<size_t>(series.nLayers) + static_cast<size_t>(l)];
        csv.integer(runs[i].info.id).integer(l + 1).integer(series.steps[k]).value(v).endRow();
      }
    }
    rect->axis(QCPAxis::atBottom)->rescale();
  }
  // One shared scale, by the dashboard panel's rule (panel_specs: sharedScaleIsLog): where one
  // run's variance dwarfs another's tenfold, logarithmic, in decades.
  const bool log = std::isfinite(lowest) && dashboard::sharedScaleIsLog(*spec, tops, false);
  for (auto* rect : rects) {
    auto* y = rect->axis(QCPAxis::atLeft);
    if (log) {
      y->setScaleType(QCPAxis::stLogarithmic);
      y->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog));
      y->setNumberFormat(QStringLiteral("eb"));
      y->setNumberPrecision(0);
      y->setRange(lowest / 1.5, ymax * 1.5);
    } else {
      y->setRange(0, ymax > 0 ? ymax * 1.05 : 1);
    }
  }
  // The curves' colours: layer 1 (dark) to L (bright), as on the dashboard.
  if (layers > 0) paper::placeColourBar(figures::layerColourBar(plot, layers, 0, 1), s);
}

namespace {

// The fewest steps any trained run of the figure was planned for, when their plans differ
// (experiment::fewestPlannedSteps, from the configs the runs were read with).
std::optional<int64_t> fewestPlannedSteps(const std::vector<RunMeta>& runs) {
  std::vector<store::RunInfo> infos;
  for (const auto& r : runs) infos.push_back(r.info);
  return experiment::fewestPlannedSteps(infos);
}

// The run's angular matrix of exactly `step` (nullptr when it has none there).
const store::Matrix* angularOf(const RunMeta& r, int64_t step) {
  const store::Matrix* m = r.data->angularAt(step);
  return m && m->step == step ? m : nullptr;
}

// The steps a figure of one step per run (angular matrices, pruning bars) shows: each run's
// last probe step at or before `fewest` (experiment::fewestPlannedSteps: set when the runs
// were planned for different lengths), so they are compared at one point; an imported model (its
// probes at its own step) and, without `fewest`, every run at its last. `steps[i]`: run i's
// probe steps, ascending; a run without any gets -1. A run shown before its last probe gets a
// warning.
std::vector<int64_t> sharedSteps(const std::vector<RunMeta>& runs,
                                 const std::vector<std::vector<int64_t>>& steps,
                                 std::optional<int64_t> fewest, QStringList& warnings) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& s = steps[i];
    if (s.empty()) {
      out.push_back(-1);
      continue;
    }
    const int64_t limit = !fewest || experiment::isImportedRun(runs[i].info) ? s.back() : *fewest;
    auto it = std::upper_bound(s.begin(), s.end(), limit);
    out.push_back(it == s.begin() ? s.front() : *std::prev(it));
    if (out.back() != s.back()) {
      warnings << QStringLiteral(
                      "run %1 (%2) is shown at step %3: runs planned for different "
                      "lengths are compared after %4 steps, the fewest any was planned for "
                      "(its last probe is at step %5)")
                      .arg(runs[i].info.id)
                      .arg(runs[i].label)
                      .arg(out.back())
                      .arg(limit)
                      .arg(s.back());
    }
  }
  return out;
}

}  // namespace

void buildMatrices(QCustomPlot* plot, const std::vector<RunMeta>& runs, const FigureStyle& s,
                   FigureCsv& csv, QStringList& warnings) {
  csv.header = {QStringLiteral("run"), QStringLiteral("step"), QStringLiteral("layer_l"),
                QStringLiteral("offset_n"), QStringLiteral("angular_distance")};
  QStringList titles;
  for (const auto& r : runs) titles << r.label;
  const int columns = paper::panelColumns(static_cast<int>(runs.size()), s.widthPt);
  auto rects = paper::panelGrid(plot, titles, columns);
  std::vector<figures::Heatmap> maps;
  std::vector<std::vector<int64_t>> steps;
  for (const auto& r : runs) {
    steps.emplace_back();
    for (const auto& m : r.data->angular) steps.back().push_back(m.step);
  }
  const auto shown = sharedSteps(runs, steps, fewestPlannedSteps(runs), warnings);
  for (size_t i = 0; i < runs.size(); ++i) {
    auto* rect = rects[i];
    rect->axis(QCPAxis::atBottom)->setLabel(QStringLiteral("offset n"));
    rect->axis(QCPAxis::atLeft)
        ->setLabel(i % static_cast<size_t>(columns) == 0 ? QStringLiteral("layer l") : QString());
    const store::Matrix* m = shown[i] < 0 ? nullptr : angularOf(runs[i], shown[i]);
    if (!m) {
      warnings << QStringLiteral("run %1 has no angular matrix").arg(runs[i].info.id);
      continue;
    }
    // The dashboard's (l, n) panel, raw (not row-normalised), its colours (small = bright).
    maps.push_back(figures::matrixHeatmap(rect->axis(QCPAxis::atBottom),
                                          rect->axis(QCPAxis::atLeft), *m, /*rowNormalise=*/false,
                                          metrics::kAngular));
    for (int r = 0; r < m->rows; ++r) {
      for (int c = 0; c < m->cols; ++c) {
        const double v = m->data[static_cast<size_t>(r) * m->cols + c];
        if (std::isfinite(v)) {
          csv.integer(runs[i].info.id)
              .integer(m->step)
              .integer(r + 1)
              .integer(c + 1)
              .value(v)
              .endRow();
        }
      }
    }
    // Whole cells: row l = 1 and the last row at full height (fitted to the cells' centres,
    // they were half cut, row 1 a thin strip along the x axis that read as an axis).
    rect->axis(QCPAxis::atBottom)->setRange(0.5, m->cols + 0.5);
    rect->axis(QCPAxis::atLeft)->setRange(0.5, m->rows + 0.5);
    for (auto type : {QCPAxis::atBottom, QCPAxis::atLeft}) rect->axis(type)->setOffset(3);
  }
  if (!maps.empty()) {
    figures::shareColourRange(maps);  // one scale for every panel
    auto* bar =
        figures::heatmapColourBar(maps.front().map, QStringLiteral("angular distance"), 0, 1);
    for (const auto& m : maps) m.map->setColorScale(bar);
    paper::placeColourBar(bar, s);
  }
}

void buildPruning(QCustomPlot* plot, const std::vector<RunMeta>& runs, const FigureStyle& s,
                  FigureCsv& csv, QStringList& warnings) {
  csv.header = {QStringLiteral("run"), QStringLiteral("step"), QStringLiteral("layer"),
                QStringLiteral("delta_loss"), QStringLiteral("standard_error")};
  plot->xAxis->setLabel(QStringLiteral("layer removed"));
  plot->yAxis->setLabel(QStringLiteral("loss increase"));
  plot->legend->setVisible(true);
  // The dashboard's pruning bars at the last pruning step every run has (sharedSteps), with
  // their standard errors (over the probe sequences) as error bars where the run stored them.
  std::vector<figures::BarSeries> bars;
  std::map<std::string, int> perScheme;
  std::vector<std::vector<int64_t>> steps;
  for (const auto& r : runs) steps.push_back(layersOf(r, metrics::kPruneDelta).steps);
  const auto shown = sharedSteps(runs, steps, fewestPlannedSteps(runs), warnings);
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    const auto& series = layersOf(r, metrics::kPruneDelta);
    figures::BarSeries b{r.label, nextRunColour(r, s, perScheme), {}, {}};
    if (series.steps.empty()) {
      warnings << QStringLiteral("run %1 has no pruning probe").arg(r.info.id);
    } else {
      int64_t step = 0;
      b.values = layerValuesAt(series, shown[i], &step);
      auto errors =
          layerValuesExactlyAt(layersOf(r, dashboard::errorMetricOf(metrics::kPruneDelta)), step);
      if (errors.size() == b.values.size()) b.errors = std::move(errors);
      for (size_t l = 0; l < b.values.size(); ++l) {
        csv.integer(r.info.id)
            .integer(step)
            .integer(static_cast<int64_t>(l) + 1)
            .value(b.values[l])
            .value(b.errors.empty() ? std::nan("") : b.errors[l])
            .endRow();
      }
    }
    bars.push_back(std::move(b));
  }
  figures::fitLayerBarAxes(plot->xAxis, plot->yAxis,
                           figures::layerBars(plot->xAxis, plot->yAxis, bars));
}

}  // namespace depthlab::ui

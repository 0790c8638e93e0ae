// See figure_export.h.
#include "export/figure_export.h"

#include <qcustomplot.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFontMetricsF>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSvgGenerator>
#include <QTextStream>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

#include "experiment/experiment_config.h"
#include "experiment/run_config.h"
#include "experiment/run_report.h"
#include "export/family_figures.h"
#include "export/figure_csv.h"
#include "export/paper_layout.h"
#include "plot/colormaps.h"
#include "plot/figure_builders.h"
#include "plot/figure_layout.h"
#include "plot/plot_helpers.h"
#include "plot/run_labels.h"
#include "store/metric_catalogue.h"

namespace depthlab::ui {

const QStringList kFigureNames = {QStringLiteral("loss"),           QStringLiteral("variance"),
                                  QStringLiteral("angular"),        QStringLiteral("pruning"),
                                  QStringLiteral("family-pruning"), QStringLiteral("family-angular")};
namespace {
constexpr int kFigureSetSize = 4;  // the set: loss, variance, angular, pruning
}  // namespace

FigureKind figureKindFromName(const QString& name) {
  const int i = kFigureNames.indexOf(name);
  if (i < 0) throw std::invalid_argument("unknown figure '" + name.toStdString() + "' (known: loss, variance, angular, pruning, family-pruning, family-angular, set)");
  return static_cast<FigureKind>(i);
}

namespace {

QColor colorFor(const QString& scheme, const FigureStyle& style) { return schemeColor(scheme, style.palette); }

// The k-th run of a scheme in a figure: the scheme's colour, then darker and lighter shades,
// so seeds of one scheme stay apart while the scheme stays recognisable.
QColor shadeFor(const QColor& base, int k) {
  static const int factors[] = {100, 150, 60, 190, 40};
  if (k == 0) return base;
  const int f = factors[k % 5];
  return f > 100 ? base.darker(f) : base.lighter(100 + (100 - f) * 2);
}

struct RunMeta {
  store::RunInfo info;
  QString label;
};

std::vector<RunMeta> loadRuns(store::RunStore& store, const std::vector<int64_t>& ids,
                              const FigureStyle& style) {
  std::vector<store::RunInfo> infos;
  for (int64_t id : ids) {
    auto r = store.run(id);
    if (!r) throw std::runtime_error("no run with id " + std::to_string(id));
    infos.push_back(*r);
  }
  if (infos.empty()) throw std::runtime_error("no runs given");
  const QStringList labels = runLabels(infos, style);  // display names, distinct
  std::vector<RunMeta> out;
  for (size_t i = 0; i < infos.size(); ++i) out.push_back({infos[i], labels[static_cast<int>(i)]});
  return out;
}

void buildLoss(QCustomPlot* plot, store::RunStore& store, const std::vector<RunMeta>& runs,
               const FigureStyle& s, FigureCsv& csv, QStringList& warnings) {
  csv.header = {QStringLiteral("run"), QStringLiteral("series"), QStringLiteral("step"), QStringLiteral("value")};
  plot->xAxis->setLabel(QStringLiteral("step"));
  plot->yAxis->setLabel(QStringLiteral("loss"));
  plot->legend->setVisible(true);
  // The dashboard's loss curves, raw, every point; one legend entry per run (validation
  // dashed, explained by the axis label).
  std::vector<figures::LossRun> losses;
  std::map<std::string, int> perScheme;
  for (const auto& r : runs) {
    figures::LossRun run{r.label, shadeFor(colorFor(QString::fromStdString(r.info.scheme), s), perScheme[r.info.scheme]++),
                         Qt::SolidLine,
                         store.scalarSeries(r.info.id, metrics::kLossTrain),
                         store.scalarSeries(r.info.id, metrics::kLossVal), {}};
    for (const auto* key : {metrics::kLossTrain, metrics::kLossVal}) {
      const auto& pts = std::string(key) == metrics::kLossVal ? run.val : run.train;
      if (pts.empty()) warnings << QStringLiteral("run %1 has no %2").arg(r.info.id).arg(QLatin1String(key));
      for (const auto& p : pts) {
        csv.integer(r.info.id).text(key).integer(p.step).value(p.value).endRow();
      }
    }
    losses.push_back(std::move(run));
  }
  figures::LossStyle style;
  style.trainWidth = s.lineWidth * 0.7;
  style.valWidth = s.lineWidth * 1.2;
  style.trainAlpha = 150;
  style.valMarkers = false;
  style.valInLegend = false;
  style.trainSuffix = QString();
  figures::lossOverlay(plot->xAxis, plot->yAxis, losses, style);
  plot->yAxis->setLabel(QStringLiteral("loss (train; validation dashed)"));
  figures::fitLossAxes(plot->xAxis, plot->yAxis, losses);
}

void buildVariance(QCustomPlot* plot, store::RunStore& store, const std::vector<RunMeta>& runs,
                   const FigureStyle& s, FigureCsv& csv, QStringList& warnings) {
  csv.header = {QStringLiteral("run"), QStringLiteral("layer"), QStringLiteral("step"), QStringLiteral("variance")};
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
    rect->axis(QCPAxis::atLeft)->setLabel(i % static_cast<size_t>(columns) == 0 ? QStringLiteral("output variance") : QString());
    auto series = store.layerSeries(runs[i].info.id, metrics::kVariance);
    if (series.steps.empty()) { warnings << QStringLiteral("run %1 has no variance probe").arg(runs[i].info.id); continue; }
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
        const double v = series.values[k * static_cast<size_t>(series.nLayers) + static_cast<size_t>(l)];
        csv.integer(runs[i].info.id).integer(l + 1).integer(series.steps[k]).value(v).endRow();
      }
    }
    rect->axis(QCPAxis::atBottom)->rescale();
  }
  // One shared scale. Where one run's variance dwarfs another's tenfold (Sandwich-LN at 1,700
  // beside DeepNorm at 3) a linear axis flattened the smaller runs into their x axis: the
  // shared scale is then logarithmic, in decades.
  const bool log =
      ymax > 0 && std::isfinite(lowest) &&
      std::any_of(tops.begin(), tops.end(), [&](double t) { return t > 0 && t * 10 <= ymax; });
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

// The steps a figure of one step per run (angular matrices, pruning bars) shows: each run's
// last probe step at or before `fewest` (experiment::fewestPlannedSteps: set when the runs
// were planned for different lengths), so they are compared at one point; an imported model (its
// probes at its own step) and, without `fewest`, every run at its last. `steps[i]`: run i's
// probe steps, ascending; a run without any gets -1. A run shown before its last probe gets a
// warning.
std::optional<int64_t> fewestPlannedSteps(store::RunStore& store,
                                          const std::vector<RunMeta>& runs) {
  std::vector<int64_t> ids;
  for (const auto& r : runs) ids.push_back(r.info.id);
  return experiment::fewestPlannedSteps(store, ids);
}

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

void buildMatrices(QCustomPlot* plot, store::RunStore& store, const std::vector<RunMeta>& runs,
                   const FigureStyle& s, FigureCsv& csv, QStringList& warnings) {
  csv.header = {QStringLiteral("run"), QStringLiteral("step"), QStringLiteral("layer_l"), QStringLiteral("offset_n"),
                QStringLiteral("angular_distance")};
  QStringList titles;
  for (const auto& r : runs) titles << r.label;
  const int columns = paper::panelColumns(static_cast<int>(runs.size()), s.widthPt);
  auto rects = paper::panelGrid(plot, titles, columns);
  std::vector<figures::Heatmap> maps;
  std::vector<std::vector<int64_t>> steps;
  for (const auto& r : runs) steps.push_back(store.matrixSteps(r.info.id, metrics::kAngular));
  const auto shown = sharedSteps(runs, steps, fewestPlannedSteps(store, runs), warnings);
  for (size_t i = 0; i < runs.size(); ++i) {
    auto* rect = rects[i];
    rect->axis(QCPAxis::atBottom)->setLabel(QStringLiteral("offset n"));
    rect->axis(QCPAxis::atLeft)->setLabel(i % static_cast<size_t>(columns) == 0 ? QStringLiteral("layer l") : QString());
    if (shown[i] < 0) {
      warnings << QStringLiteral("run %1 has no angular matrix").arg(runs[i].info.id);
      continue;
    }
    auto m = store.matrix(runs[i].info.id, metrics::kAngular, shown[i]);
    // The dashboard's (l, n) panel, raw (not row-normalised), its colours (small = bright).
    maps.push_back(figures::matrixHeatmap(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft),
                                          *m, /*rowNormalise=*/false, metrics::kAngular));
    for (int r = 0; r < m->rows; ++r) {
      for (int c = 0; c < m->cols; ++c) {
        const double v = m->data[static_cast<size_t>(r) * m->cols + c];
        if (std::isfinite(v)) {
          csv.integer(runs[i].info.id).integer(m->step).integer(r + 1).integer(c + 1).value(v).endRow();
        }
      }
    }
    rect->axis(QCPAxis::atBottom)->rescale();
    rect->axis(QCPAxis::atLeft)->rescale();
  }
  if (!maps.empty()) {
    figures::shareColourRange(maps);  // one scale for every panel
    auto* bar = figures::heatmapColourBar(maps.front().map, QStringLiteral("angular distance"), 0, 1);
    for (const auto& m : maps) m.map->setColorScale(bar);
    paper::placeColourBar(bar, s);
  }
}

void buildPruning(QCustomPlot* plot, store::RunStore& store, const std::vector<RunMeta>& runs,
                  const FigureStyle& s, FigureCsv& csv, QStringList& warnings) {
  csv.header = {QStringLiteral("run"), QStringLiteral("step"), QStringLiteral("layer"),
                QStringLiteral("delta_loss"), QStringLiteral("standard_error")};
  plot->xAxis->setLabel(QStringLiteral("layer removed"));
  plot->yAxis->setLabel(QStringLiteral("loss increase"));
  plot->legend->setVisible(true);
  // The dashboard's pruning bars at the last pruning step every run has (sharedSteps), with
  // their standard errors (over the probe sequences) as error bars where the run stored them.
  std::vector<figures::BarSeries> bars;
  std::map<std::string, int> perScheme;
  std::vector<store::LayerSeries> deltas;
  std::vector<std::vector<int64_t>> steps;
  for (const auto& r : runs) {
    deltas.push_back(store.layerSeries(r.info.id, metrics::kPruneDelta));
    steps.push_back(deltas.back().steps);
  }
  const auto shown = sharedSteps(runs, steps, fewestPlannedSteps(store, runs), warnings);
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    const auto& series = deltas[i];
    figures::BarSeries b{
        r.label,
        shadeFor(colorFor(QString::fromStdString(r.info.scheme), s), perScheme[r.info.scheme]++),
        {},
        {}};
    if (series.steps.empty()) {
      warnings << QStringLiteral("run %1 has no pruning probe").arg(r.info.id);
    } else {
      int64_t step = 0;
      b.values = layerValuesAt(series, shown[i], &step);
      auto errors =
          layerValuesExactlyAt(store.layerSeries(r.info.id, metrics::kPruneDeltaError), step);
      if (errors.size() == b.values.size()) b.errors = std::move(errors);
      for (size_t l = 0; l < b.values.size(); ++l) {
        csv.integer(r.info.id).integer(step).integer(static_cast<int64_t>(l) + 1).value(b.values[l])
            .value(b.errors.empty() ? std::nan("") : b.errors[l]).endRow();
      }
    }
    bars.push_back(std::move(b));
  }
  figures::fitLayerBarAxes(plot->xAxis, plot->yAxis,
                           figures::layerBars(plot->xAxis, plot->yAxis, bars));
}

void writeBytes(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(bytes) != bytes.size()) {
    throw std::runtime_error("cannot write " + path.toStdString());
  }
}

void writeText(const QString& path, const QString& text) { writeBytes(path, text.toUtf8()); }

}  // namespace

namespace {

// The figure of `req` drawn on `plot` in paper style at its size with its text fitted, its CSV
// rows and warnings: what the preview shows and what is saved.
void drawInto(QCustomPlot* plot, store::RunStore& store, const std::vector<RunMeta>& runs,
              const ExportRequest& req, FigureCsv& csv, QStringList& warnings) {
  const auto& s = req.style;
  switch (req.kind) {
    case FigureKind::Loss: buildLoss(plot, store, runs, s, csv, warnings); break;
    case FigureKind::Variance: buildVariance(plot, store, runs, s, csv, warnings); break;
    case FigureKind::Angular: buildMatrices(plot, store, runs, s, csv, warnings); break;
    case FigureKind::Pruning: buildPruning(plot, store, runs, s, csv, warnings); break;
    case FigureKind::FamilyPruning:
    case FigureKind::FamilyAngular: {
      std::vector<int64_t> ids;
      QStringList labels;
      for (const auto& r : runs) ids.push_back(r.info.id), labels << r.label;
      buildFamilyProfile(plot, store, ids, labels, s, req.kind == FigureKind::FamilyPruning, csv, warnings);
      break;
    }
  }
  paper::applyPaperStyle(plot, s);
  const bool onePanel = req.kind != FigureKind::Variance && req.kind != FigureKind::Angular;
  paper::fitToSize(plot, figureSizePt(req), /*legendInPanel=*/onePanel);
}

}  // namespace

QSize figureSizePt(const ExportRequest& req) {
  const auto& s = req.style;
  const int w = static_cast<int>(std::lround(s.widthPt));
  if (s.heightPt > 0) return {w, static_cast<int>(std::lround(s.heightPt))};
  int rows = 1, columns = 1;
  if (req.kind == FigureKind::Variance || req.kind == FigureKind::Angular) {
    const int n = std::max<int>(1, static_cast<int>(req.runs.size()));
    columns = paper::panelColumns(n, s.widthPt);
    rows = (n + columns - 1) / columns;
  }
  // A single panel: the classic 0.68 aspect; a grid: each row about as tall as a panel is wide,
  // plus its title and axis labels, never taller than the single panel.
  double h = rows * std::min(s.widthPt * 0.68, s.widthPt / columns + 4.0 * s.fontPt);
  // A family figure names each model with its family and depth: in a narrow column its legend
  // goes below the panel and needs the height of a few more lines.
  const bool family = req.kind == FigureKind::FamilyPruning || req.kind == FigureKind::FamilyAngular;
  if (family && s.widthPt < 220) h = s.widthPt * 0.68 + 2.5 * s.fontPt * static_cast<double>(req.runs.size());
  if (columns > 1 || rows > 1 || req.kind == FigureKind::Variance || req.kind == FigureKind::Angular) {
    if (paper::colourBarBelow(s)) h += 4.0 * s.fontPt;  // the horizontal colour bar and its label
  }
  return {w, static_cast<int>(std::lround(h))};
}

QStringList drawFigure(QCustomPlot* plot, store::RunStore& store, const ExportRequest& req) {
  FigureCsv csv;
  QStringList warnings;
  drawInto(plot, store, loadRuns(store, req.runs, req.style), req, csv, warnings);
  return warnings;
}

ExportResult exportFigure(store::RunStore& store, const ExportRequest& req) {
  ExportResult result;
  const auto runs = loadRuns(store, req.runs, req.style);
  const auto& s = req.style;
  QCustomPlot plot;
  FigureCsv csv;
  drawInto(&plot, store, runs, req, csv, result.warnings);
  if (csv.empty()) {
    throw std::runtime_error("nothing to plot: " + result.warnings.join(QStringLiteral("; ")).toStdString());
  }
  const QSize size = figureSizePt(req);
  const int wPt = size.width(), hPt = size.height();
  QDir().mkpath(QFileInfo(req.path).absolutePath());
  bool ok = false;
  if (req.format == QLatin1String("pdf")) {
    ok = plot.savePdf(req.path, wPt, hPt, QCP::epNoCosmetic, QStringLiteral("DepthLab"),
                      kFigureNames[static_cast<int>(req.kind)]);
  } else if (req.format == QLatin1String("svg")) {
    QSvgGenerator svg;
    svg.setFileName(req.path);
    svg.setSize(QSize(wPt, hPt));
    svg.setViewBox(QRect(0, 0, wPt, hPt));
    svg.setResolution(72);
    svg.setTitle(kFigureNames[static_cast<int>(req.kind)]);
    QCPPainter painter;
    painter.begin(&svg);
    plot.toPainter(&painter, wPt, hPt);
    ok = painter.end();
  } else if (req.format == QLatin1String("png")) {
    const double scale = s.dpi / 72.0;  // points -> pixels at the chosen DPI
    ok = plot.savePng(req.path, wPt, hPt, scale, -1, static_cast<int>(std::lround(s.dpi)), QCP::ruDotsPerInch);
  } else {
    throw std::runtime_error("unknown format '" + req.format.toStdString() + "' (known: pdf, svg, png)");
  }
  if (!ok) throw std::runtime_error("cannot write " + req.path.toStdString());
  result.files << req.path;

  const QString base = QFileInfo(req.path).path() + QLatin1Char('/') + QFileInfo(req.path).completeBaseName();
  writeBytes(base + QStringLiteral(".csv"), csv.bytes());
  result.files << base + QStringLiteral(".csv");

  QJsonArray runArray;
  for (const auto& r : runs) {
    runArray.append(QJsonObject{
        {QStringLiteral("id"), static_cast<qint64>(r.info.id)},
        {QStringLiteral("name"), QString::fromStdString(r.info.name)},
        {QStringLiteral("scheme"), QString::fromStdString(r.info.scheme)},
        {QStringLiteral("group"), QString::fromStdString(r.info.groupName)},
        {QStringLiteral("config"), QJsonDocument::fromJson(QByteArray::fromStdString(r.info.configJson)).object()}});
  }
  QJsonObject meta{{QStringLiteral("figure"), kFigureNames[static_cast<int>(req.kind)]},
                   {QStringLiteral("format"), req.format},
                   {QStringLiteral("app_version"), QStringLiteral(DEPTHLAB_VERSION)},
                   {QStringLiteral("database"), QString::fromStdString(store.path())},
                   {QStringLiteral("style"), QJsonDocument::fromJson(styleToJson(s).toUtf8()).object()},
                   {QStringLiteral("runs"), runArray},
                   {QStringLiteral("warnings"), QJsonArray::fromStringList(result.warnings)}};
  writeText(base + QStringLiteral(".json"), QString::fromUtf8(QJsonDocument(meta).toJson(QJsonDocument::Indented)));
  result.files << base + QStringLiteral(".json");
  return result;
}

ExportResult exportFigureSet(store::RunStore& store, const std::vector<int64_t>& runs,
                             const QString& format, const QString& dir, const FigureStyle& style) {
  ExportResult all;
  for (const auto& name : kFigureNames.mid(0, kFigureSetSize)) {
    ExportRequest req;
    req.runs = runs;
    req.kind = figureKindFromName(name);
    req.format = format;
    req.style = style;
    req.path = QDir(dir).filePath(name + QLatin1Char('.') + format);
    try {
      auto r = exportFigure(store, req);
      all.files << r.files;
      all.warnings << r.warnings;
    } catch (const std::runtime_error& e) {
      all.warnings << QStringLiteral("%1: %2").arg(name, QString::fromStdString(e.what()));
    }
  }
  if (all.files.isEmpty()) throw std::runtime_error("no figure could be made: " + all.warnings.join(QStringLiteral("; ")).toStdString());
  return all;
}

}  // namespace depthlab::ui

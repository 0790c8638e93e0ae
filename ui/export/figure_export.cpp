// See figure_export.h.
#include "export/figure_export.h"

#include <qcustomplot.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSvgGenerator>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "dashboard/panel_specs.h"
#include "export/figure_catalogue.h"
#include "export/figure_csv.h"
#include "export/paper_figures.h"
#include "export/paper_layout.h"
#include "plot/run_labels.h"

namespace depthlab::ui {

namespace {

// The figure's runs `ids` among those read, labelled by the style (display names, distinct).
std::vector<RunMeta> figureRuns(const FigureRuns& read, const std::vector<int64_t>& ids,
                                const FigureStyle& style) {
  if (ids.empty()) throw std::runtime_error("no runs given");
  std::vector<store::RunInfo> infos;
  std::vector<std::shared_ptr<const RunData>> data;
  for (int64_t id : ids) {
    auto it = std::find_if(read.series.begin(), read.series.end(),
                           [id](const auto& d) { return d && d->info.id == id; });
    if (it == read.series.end()) throw std::runtime_error("no run with id " + std::to_string(id));
    infos.push_back((*it)->info);
    data.push_back(*it);
  }
  const QStringList labels = runLabels(infos, style);
  std::vector<RunMeta> out;
  for (size_t i = 0; i < infos.size(); ++i)
    out.push_back({infos[i], labels[static_cast<int>(i)], data[i]});
  return out;
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

// The figure of `req` drawn on `plot` by its catalogue row's builder, in paper style at its size
// with its text fitted, its CSV rows and warnings: what the preview shows and what is saved.
void drawInto(QCustomPlot* plot, const FigureRuns& read, const std::vector<RunMeta>& runs,
              const ExportRequest& req, FigureCsv& csv, QStringList& warnings) {
  const FigureRow& row = requireFigure(req.figure);
  row.build(plot, FigureInput{read, runs, req.style, csv, warnings});
  paper::applyPaperStyle(plot, req.style);
  paper::fitToSize(plot, figureSizePt(req), /*legendInPanel=*/row.layout == FigureLayout::OnePanel);
}

}  // namespace

QSize figureSizePt(const ExportRequest& req) {
  const auto& s = req.style;
  const FigureRow& row = requireFigure(req.figure);
  const int w = static_cast<int>(std::lround(s.widthPt));
  if (s.heightPt > 0) return {w, static_cast<int>(std::lround(s.heightPt))};
  const bool grid = row.layout == FigureLayout::PanelPerRun;
  int rows = 1, columns = 1;
  if (grid) {
    const int n = std::max<int>(1, static_cast<int>(req.runs.size()));
    columns = paper::panelColumns(n, s.widthPt);
    rows = (n + columns - 1) / columns;
  }
  // A single panel: the classic 0.68 aspect; a grid: each row about as tall as a panel is wide,
  // plus its title and axis labels, never taller than the single panel.
  double h = rows * std::min(s.widthPt * 0.68, s.widthPt / columns + 4.0 * s.fontPt);
  // In a narrow column the legend goes below the panel (the family figures name each model with
  // its family and depth; the loss figure adds the train / validation key): the panel keeps its
  // height and the figure grows by the legend's lines.
  if (row.narrowLegendLinesPerRun > 0 && s.widthPt < 220) {
    h = s.widthPt * 0.68 + row.narrowLegendLinesPerRun * s.fontPt *
                               (static_cast<double>(req.runs.size()) + row.narrowLegendExtraLines);
  }
  if (grid && paper::colourBarBelow(s))
    h += 4.0 * s.fontPt;  // the horizontal colour bar and its label
  return {w, static_cast<int>(std::lround(h))};
}

bool isFamilyFigure(const QString& id) { return requireFigure(id).familyTable; }

FigureRuns readFigureRuns(store::RunStore& store, const std::vector<int64_t>& ids,
                          bool withFamilyTable) {
  if (ids.empty()) throw std::runtime_error("no runs given");
  FigureRuns out;
  for (int64_t id : ids) {
    auto info = store.run(id);
    if (!info) throw std::runtime_error("no run with id " + std::to_string(id));
    auto data = std::make_shared<RunData>();
    readRunSeries(store, *info, *data);
    out.series.push_back(std::move(data));
  }
  if (withFamilyTable) {
    out.family =
        std::make_shared<const experiment::FamilyTable>(experiment::makeFamilyTable(store, ids));
  }
  return out;
}

QStringList drawFigure(QCustomPlot* plot, const FigureRuns& read, const ExportRequest& req,
                       FigureCsv* csv) {
  FigureCsv own;
  QStringList warnings;
  drawInto(plot, read, figureRuns(read, req.runs, req.style), req, csv ? *csv : own, warnings);
  return warnings;
}

QStringList drawFigure(QCustomPlot* plot, store::RunStore& store, const ExportRequest& req) {
  return drawFigure(plot, readFigureRuns(store, req.runs, isFamilyFigure(req.figure)), req);
}

namespace {

// Writes `plot` to req.path in req.format at the figure's size.
void saveFigureFile(QCustomPlot& plot, const ExportRequest& req) {
  const auto& s = req.style;
  const QSize size = figureSizePt(req);
  const int wPt = size.width(), hPt = size.height();
  QDir().mkpath(QFileInfo(req.path).absolutePath());
  bool ok = false;
  if (req.format == QLatin1String("pdf")) {
    ok =
        plot.savePdf(req.path, wPt, hPt, QCP::epNoCosmetic, QStringLiteral("DepthLab"), req.figure);
  } else if (req.format == QLatin1String("svg")) {
    QSvgGenerator svg;
    svg.setFileName(req.path);
    svg.setSize(QSize(wPt, hPt));
    svg.setViewBox(QRect(0, 0, wPt, hPt));
    svg.setResolution(72);
    svg.setTitle(req.figure);
    QCPPainter painter;
    painter.begin(&svg);
    plot.toPainter(&painter, wPt, hPt);
    ok = painter.end();
  } else if (req.format == QLatin1String("png")) {
    const double scale = s.dpi / 72.0;  // points -> pixels at the chosen DPI
    ok = plot.savePng(req.path, wPt, hPt, scale, -1, static_cast<int>(std::lround(s.dpi)),
                      QCP::ruDotsPerInch);
  } else {
    throw std::runtime_error("unknown format '" + req.format.toStdString() +
                             "' (known: pdf, svg, png)");
  }
  if (!ok) throw std::runtime_error("cannot write " + req.path.toStdString());
}

// The JSON beside the figure: the runs with their configs, the app version, the settings.
QString metaJson(const std::vector<RunMeta>& runs, const ExportRequest& req,
                 const std::string& database, const QStringList& warnings) {
  QJsonArray runArray;
  for (const auto& r : runs) {
    runArray.append(QJsonObject{
        {QStringLiteral("id"), static_cast<qint64>(r.info.id)},
        {QStringLiteral("name"), QString::fromStdString(r.info.name)},
        {QStringLiteral("scheme"), QString::fromStdString(r.info.scheme)},
        {QStringLiteral("group"), QString::fromStdString(r.info.groupName)},
        {QStringLiteral("config"),
         QJsonDocument::fromJson(QByteArray::fromStdString(r.info.configJson)).object()}});
  }
  QJsonObject meta{
      {QStringLiteral("figure"), req.figure},
      {QStringLiteral("format"), req.format},
      {QStringLiteral("app_version"), QStringLiteral(DEPTHLAB_VERSION)},
      {QStringLiteral("database"), QString::fromStdString(database)},
      {QStringLiteral("style"), QJsonDocument::fromJson(styleToJson(req.style).toUtf8()).object()},
      {QStringLiteral("runs"), runArray},
      {QStringLiteral("warnings"), QJsonArray::fromStringList(warnings)}};
  return QString::fromUtf8(QJsonDocument(meta).toJson(QJsonDocument::Indented));
}

// exportFigure from runs read before (a figure set reads its runs once for its four figures).
ExportResult exportRead(const FigureRuns& read, const std::string& database,
                        const ExportRequest& req) {
  ExportResult result;
  const auto runs = figureRuns(read, req.runs, req.style);
  QCustomPlot plot;
  FigureCsv csv;
  drawInto(&plot, read, runs, req, csv, result.warnings);
  if (csv.empty()) {
    throw std::runtime_error("nothing to plot: " +
                             result.warnings.join(QStringLiteral("; ")).toStdString());
  }
  saveFigureFile(plot, req);
  result.files << req.path;
  const QString base =
      QFileInfo(req.path).path() + QLatin1Char('/') + QFileInfo(req.path).completeBaseName();
  writeBytes(base + QStringLiteral(".csv"), csv.bytes());
  result.files << base + QStringLiteral(".csv");
  writeText(base + QStringLiteral(".json"), metaJson(runs, req, database, result.warnings));
  result.files << base + QStringLiteral(".json");
  return result;
}

}  // namespace

ExportResult exportFigure(store::RunStore& store, const ExportRequest& req) {
  return exportRead(readFigureRuns(store, req.runs, isFamilyFigure(req.figure)), store.path(), req);
}

ExportResult exportFigureSet(store::RunStore& store, const std::vector<int64_t>& runs,
                             const QString& format, const QString& dir, const FigureStyle& style) {
  ExportResult all;
  // The runs read once for the four figures; when that fails, each figure says why below.
  std::optional<FigureRuns> read;
  try {
    read = readFigureRuns(store, runs, /*withFamilyTable=*/false);
  } catch (const std::runtime_error&) {}
  // The set: the figures of the dashboard panels whose metrics the catalogue flags for export
  // (loss, variance, angular, pruning), from the one figure spec.
  for (const auto& name : dashboard::exportedFigures()) {
    ExportRequest req;
    req.runs = runs;
    req.figure = name;
    req.format = format;
    req.style = style;
    req.path = QDir(dir).filePath(name + QLatin1Char('.') + format);
    try {
      auto r = read && !isFamilyFigure(req.figure) ? exportRead(*read, store.path(), req)
                                                   : exportFigure(store, req);
      all.files << r.files;
      all.warnings << r.warnings;
    } catch (const std::runtime_error& e) {
      all.warnings << QStringLiteral("%1: %2").arg(name, QString::fromStdString(e.what()));
    }
  }
  if (all.files.isEmpty())
    throw std::runtime_error("no figure could be made: " +
                             all.warnings.join(QStringLiteral("; ")).toStdString());
  return all;
}

}  // namespace depthlab::ui

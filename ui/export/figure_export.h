// Paper figures from stored runs, each a row of the figure catalogue (figure_catalogue.h: loss
// curves, per-layer variance over training, angular-distance and block-pruning (l, n) heatmaps,
// single-layer pruning, model families against relative depth), drawn by the row's builder,
// sized by its layout, rendered in a clean paper style to PDF (vector,
// fonts embedded), SVG (vector) or PNG (DPI). Next to every figure: a CSV of exactly the
// plotted data and a JSON with the runs' configs, the app version and the export settings.
// The runs' series are read once, through the dashboard's reader (dashboard/run_series.h), into
// FigureRuns; drawing reads no store, so a preview redraws from runs read when it opened.
// Works without a display (Qt's offscreen platform).
#pragma once

#include <QSize>
#include <QString>
#include <QStringList>

#include <memory>
#include <vector>

#include "dashboard/run_series.h"
#include "experiment/family_table.h"
#include "export/figure_style.h"
#include "store/run_store.h"

class QCustomPlot;

namespace depthlab::ui {

class FigureCsv;

struct ExportRequest {
  std::vector<int64_t> runs;
  QString figure = QStringLiteral("variance");  // a figure_catalogue.h id
  QString format = QStringLiteral("pdf");       // pdf | svg | png
  QString path;                                 // the figure file; .csv / .json go beside it
  FigureStyle style;
};

struct ExportResult {
  QStringList files;     // figure, csv, json
  QStringList warnings;  // e.g. a run without the metric
};

/// The runs a figure draws, read once: each run's series through readRunSeries (the dashboard's
/// reader) and, when asked, the family figures' table of the same runs (their newest probe rows
/// and import records: experiment::makeFamilyTable).
struct FigureRuns {
  std::vector<std::shared_ptr<const RunData>> series;     // in the order of the ids read
  std::shared_ptr<const experiment::FamilyTable> family;  // null unless read with it
};
/// Throws std::runtime_error for an unknown run id or none.
FigureRuns readFigureRuns(store::RunStore& store, const std::vector<int64_t>& ids,
                          bool withFamilyTable = true);
/// Whether the figure `id` reads the family table (its catalogue row says so).
bool isFamilyFigure(const QString& id);

/// Throws std::runtime_error with a user-facing message (unknown run, nothing to plot, I/O).
ExportResult exportFigure(store::RunStore& store, const ExportRequest& request);
/// The figure's size in points: the style's width; its height, or (0) one from the panel grid.
/// These and the drawing functions throw std::invalid_argument for a figure not in the catalogue.
QSize figureSizePt(const ExportRequest& request);
/// Draws the figure of `request` (kind, runs, style) onto `plot` exactly as exportFigure saves
/// it, sized to figureSizePt (1 pixel = 1 pt) with its text fitted (titles, legend, ticks),
/// without saving; returns the warnings. For the preview and tests.
QStringList drawFigure(QCustomPlot* plot, store::RunStore& store, const ExportRequest& request);
/// The same from runs read before (request.runs must be among them, and a family figure needs
/// their family table; else std::runtime_error): reads no store. `csv`, when given, gets the
/// figure's CSV as exportFigure writes it.
QStringList drawFigure(QCustomPlot* plot, const FigureRuns& runs, const ExportRequest& request,
                       FigureCsv* csv = nullptr);
/// The paper figure set for a group of runs (dashboard::exportedFigures: loss, variance,
/// angular, pruning) into `dir`.
ExportResult exportFigureSet(store::RunStore& store, const std::vector<int64_t>& runs,
                             const QString& format, const QString& dir, const FigureStyle& style);

}  // namespace depthlab::ui

// Paper figures from stored runs: loss curves, per-layer variance over training (the paper's
// Fig. 4 analogue), angular-distance (l, n) heatmaps side by side (Fig. 3 / 7 right) and
// single-layer pruning deltas (Fig. 7 left), models of several families against relative depth
// (Fig. 1 kind: family_figures.h), rendered in a clean paper style to PDF (vector,
// fonts embedded), SVG (vector) or PNG (DPI). Next to every figure: a CSV of exactly the
// plotted data and a JSON with the runs' configs, the app version and the export settings.
// Works without a display (Qt's offscreen platform).
#pragma once

#include <QSize>
#include <QString>
#include <QStringList>

#include <vector>

#include "export/figure_style.h"
#include "store/run_store.h"

class QCustomPlot;

namespace depthlab::ui {

enum class FigureKind { Loss, Variance, Angular, Pruning, FamilyPruning, FamilyAngular };
/// loss, variance, angular, pruning, family-pruning, family-angular (+ "set" = the first four).
extern const QStringList kFigureNames;

struct ExportRequest {
  std::vector<int64_t> runs;
  FigureKind kind = FigureKind::Variance;
  QString format = QStringLiteral("pdf");  // pdf | svg | png
  QString path;                            // the figure file; .csv / .json go beside it
  FigureStyle style;
};

struct ExportResult {
  QStringList files;                       // figure, csv, json
  QStringList warnings;                    // e.g. a run without the metric
};

/// Throws std::runtime_error with a user-facing message (unknown run, nothing to plot, I/O).
ExportResult exportFigure(store::RunStore& store, const ExportRequest& request);
/// The figure's size in points: the style's width; its height, or (0) one from the panel grid.
QSize figureSizePt(const ExportRequest& request);
/// Draws the figure of `request` (kind, runs, style) onto `plot` exactly as exportFigure saves
/// it, sized to figureSizePt (1 pixel = 1 pt) with its text fitted (titles, legend, ticks),
/// without saving; returns the warnings. For the preview and tests.
QStringList drawFigure(QCustomPlot* plot, store::RunStore& store, const ExportRequest& request);
/// The paper figure set for a group of runs: loss, variance, angular, pruning into `dir`.
ExportResult exportFigureSet(store::RunStore& store, const std::vector<int64_t>& runs,
                             const QString& format, const QString& dir, const FigureStyle& style);
FigureKind figureKindFromName(const QString& name);  // throws std::invalid_argument

}  // namespace depthlab::ui

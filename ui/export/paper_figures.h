// The panels of the paper figures over stored runs, drawn onto a plot before the paper style
// and the fit at physical size (paper_layout.h): loss curves (loss_figure.cpp), per-layer
// variance over training (Fig. 4 analogue), the angular-distance (l, n) matrices side by side
// (Fig. 3 / 7 right) and single-layer pruning bars (Fig. 7 left). Each also fills the CSV of
// exactly what it plots and warns about what a run lacks. They draw from the runs' series read
// once through the dashboard's reader (RunMeta::data, dashboard/run_series.h) and read no store.
// Saving is figure_export.cpp's.
#pragma once

#include <QColor>
#include <QString>
#include <QStringList>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dashboard/run_series.h"
#include "export/figure_style.h"
#include "store/run_store.h"

class QCustomPlot;

namespace depthlab::ui {

class FigureCsv;
struct FigureInput;  // figure_catalogue.h

/// A run of the figure, what the figure calls it (display names, distinct) and its series, as
/// readRunSeries read them (never null in a figure's runs).
struct RunMeta {
  store::RunInfo info;
  QString label;
  std::shared_ptr<const RunData> data;
};

/// The colour of the next run of its scheme: the scheme's colour, then darker and lighter
/// shades, so seeds of one scheme stay apart while the scheme stays recognisable.
QColor nextRunColour(const RunMeta& run, const FigureStyle& style,
                     std::map<std::string, int>& perScheme);

/// Train and validation losses, one colour per run, a key saying which line is which, the
/// train curves smoothed by the style's EMA weight (its value in the key).
void buildLoss(QCustomPlot* plot, const std::vector<RunMeta>& runs, const FigureStyle& s,
               FigureCsv& csv, QStringList& warnings);
void buildVariance(QCustomPlot* plot, const std::vector<RunMeta>& runs, const FigureStyle& s,
                   FigureCsv& csv, QStringList& warnings);
void buildMatrices(QCustomPlot* plot, const std::vector<RunMeta>& runs, const FigureStyle& s,
                   FigureCsv& csv, QStringList& warnings);
void buildPruning(QCustomPlot* plot, const std::vector<RunMeta>& runs, const FigureStyle& s,
                  FigureCsv& csv, QStringList& warnings);
/// The (l, n) block-pruning matrices of the end of each run, a panel per run, one diverging
/// scale (block_pruning_figure.cpp).
void buildBlockPruning(QCustomPlot* plot, const FigureInput& in);
/// The logit lens's KL to the output, layer x step, a panel per run, one colour scale
/// (lens_figure.cpp).
void buildLens(QCustomPlot* plot, const FigureInput& in);
/// Task accuracy and loss against the fraction of blocks removed (pruned_task_figure.cpp).
void buildPrunedTask(QCustomPlot* plot, const FigureInput& in);

}  // namespace depthlab::ui

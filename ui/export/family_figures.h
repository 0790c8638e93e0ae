// The family figures: per-layer profiles of several models against relative depth l / L, one
// line per model (the paper's Fig. 1 kind): the loss increase when a layer is removed (with its
// standard error as error bars), and the angular distance from each layer to the next. Models of
// different depths share one x axis. Data from experiment::FamilyTable (the store's newest probe
// rows and import records, read by figure_export.cpp, not through the dashboard's reader); this
// file reads no store. figure_export.cpp saves, styles and fits the figure.
#pragma once

#include <QStringList>

#include <cstdint>
#include <vector>

#include "experiment/family_table.h"
#include "export/figure_style.h"

class QCustomPlot;

namespace depthlab::ui {

class FigureCsv;

/// Draws the rows of `table` (labelled `labels`, in order) on `plot`'s main axes: pruning deltas
/// when `pruning`, else the angular distance to the next layer; `csv` gets one row per point
/// (run, layer, l / L, value, standard error); appends a warning per model without the probe.
void buildFamilyProfile(QCustomPlot* plot, const experiment::FamilyTable& table,
                        const QStringList& labels, const FigureStyle& style, bool pruning,
                        FigureCsv& csv, QStringList& warnings);

}  // namespace depthlab::ui

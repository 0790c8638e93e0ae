// The depth study's figure set (analysis::DepthStudy, what `report --study` prints): the
// validation loss of every scheme, ranked (a dot per scheme, its seeds' min-max as a bar); the
// per-layer output variance profile of every scheme (one line each, colour and marker by
// scheme, the key beside or below the panel); and the pruning loss of the deepest quarter of
// layers, ranked the same way. Each is saved (PDF, SVG or PNG) with a CSV of exactly what it
// plots; study.json beside them holds the study's numbers and the export settings. Drawn in the
// paper style of paper_layout.h and fitted at physical size. Does not compute the study or any
// probe. Schemes lacking a quantity are left out of that figure with a warning.
#pragma once

#include <QSize>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <vector>

#include "analysis/depth_study.h"
#include "export/figure_export.h"
#include "export/figure_style.h"
#include "store/run_store.h"

class QCustomPlot;

namespace depthlab::ui {

class FigureCsv;

enum class StudyFigure { Loss, Variance, Pruning };
/// study-loss, study-variance, study-pruning: the files' base names, in StudyFigure order.
extern const QStringList kStudyFigureNames;

/// The figure's size in points for `schemes` schemes: the style's width; a height that gives
/// each scheme's name a line (ranked figures) or the key its rows (variance).
QSize studyFigureSizePt(StudyFigure kind, int schemes, const FigureStyle& style);
/// Draws `kind` of `study` on `plot` in paper style at studyFigureSizePt, text fitted; fills
/// `csv`; returns the warnings (a scheme without the quantity).
QStringList drawStudyFigure(QCustomPlot* plot, const analysis::DepthStudy& study, StudyFigure kind,
                            const FigureStyle& style, FigureCsv& csv);
/// The three figures of the study of `runs` into `dir` (created), as `format` (pdf | svg | png).
/// Throws std::runtime_error when no figure has anything to plot, or on I/O.
ExportResult exportStudyFigures(store::RunStore& store, const std::vector<int64_t>& runs,
                                const QString& format, const QString& dir,
                                const FigureStyle& style);

}  // namespace depthlab::ui

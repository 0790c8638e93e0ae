// The one table of the paper figures: a row per figure with its id (`export --figure ID`, the
// file's default name), title (the figure dialog's entry, the PDF's and SVG's title), the
// metric-catalogue keys it reads, its layout (one panel, or a panel per run with a shared
// colour scale), and its builder. figure_export.cpp draws, sizes and saves every figure from
// its row; the figure dialog lists the rows; depthlab-export checks --figure against them and
// prints them in its --help; a dashboard panel names the row it exports as (PanelSpec.figure,
// checked against this table by a test). Adding a figure is a row here and its builder.
// Composite exports ("set": the figures the metric catalogue flags for export; "study": the
// depth study's figures) are not rows: they are made of rows or of study_figures.h.
// No drawing and no store reads here.
#pragma once

#include <QString>
#include <QStringList>

#include <string>
#include <vector>

class QCustomPlot;

namespace depthlab::ui {

class FigureCsv;
struct FigureRuns;
struct FigureStyle;
struct RunMeta;

/// What a builder draws from: the figure's runs (labelled by the style, in the order asked),
/// all that was read for them (FigureRuns: the series, and the family table where the row asks
/// for it), the style. It fills `csv` with exactly what it plots and appends a warning for what
/// a run lacks. It draws before the paper style and the fit at physical size (figure_export).
struct FigureInput {
  const FigureRuns& read;
  const std::vector<RunMeta>& runs;
  const FigureStyle& style;
  FigureCsv& csv;
  QStringList& warnings;
};
using FigureBuilder = void (*)(QCustomPlot* plot, const FigureInput& in);

enum class FigureLayout {
  OnePanel,    // one axis rect; the legend inside it (or below it in a narrow column)
  PanelPerRun  // a panel per run in a grid (paper::panelColumns), one colour scale or key
};

struct FigureRow {
  const char* id;                  // "variance"
  const char* title;               // "Per-layer variance over training"
  std::vector<std::string> reads;  // metric-catalogue keys; empty with familyTable
  FigureLayout layout = FigureLayout::OnePanel;
  bool familyTable = false;  // reads experiment::makeFamilyTable (model families)
  // In a column narrower than 220 pt the legend goes below the panel: the figure grows by this
  // many text lines per run, plus `narrowLegendExtraLines` (0, 0: the height stays).
  double narrowLegendLinesPerRun = 0;
  double narrowLegendExtraLines = 0;
  FigureBuilder build = nullptr;
};

/// Every figure, in the order the dialog and --help list them.
const std::vector<FigureRow>& figureCatalogue();
/// The row of `id`, or nullptr.
const FigureRow* findFigure(const QString& id);
/// The row of `id`; throws std::invalid_argument naming the known ids (and "set", "study").
const FigureRow& requireFigure(const QString& id);
/// The ids, in table order.
QStringList figureIds();
/// One line per figure for --help: "  variance          Per-layer variance ... (reads: variance)".
QString figureHelp();

}  // namespace depthlab::ui

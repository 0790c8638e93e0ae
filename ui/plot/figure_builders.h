// Figure builders: the plots the dashboard, Compare and paper-figure export all draw, built
// once here so that an exported figure is the panel on screen by construction. Each builder
// draws onto a given pair of axes (a panel of the dashboard, or one panel of a multi-panel
// paper figure) and returns what its caller needs to finish the figure (ranges, counts). Styling
// that differs between screen and paper (line widths, colours) comes in as parameters.
// Builders never read the store and never replot.
#pragma once

#include <QColor>
#include <QString>
#include <QStringList>
#include <Qt>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plot/series_adapter.h"
#include "store/store_types.h"

class QCPAbstractPlottable;
class QCPAxis;
class QCPColorMap;
class QCPErrorBars;
class QCPItemText;
class QFont;
class QPen;
class QCPColorScale;
class QCustomPlot;

namespace depthlab::ui::figures {

/// One run's value per layer, drawn as a bar of one colour in each layer's group.
struct BarSeries {
  QString name;
  QColor colour;
  std::vector<float> values;  // (L)
  std::vector<float> errors;  // (L) standard errors drawn as +- error bars; empty or all NaN: none
};

/// +- errors[i] on point i of `data` (bars or a graph), uncapped (as matplotlib's default), in
/// `pen`, out of the legend. Null, and nothing drawn, when the errors do not match the points
/// or none is finite (one sequence: no spread); a NaN error draws no bar.
QCPErrorBars* addErrorBars(QCPAbstractPlottable* data, const std::vector<float>& errors,
                           const QPen& pen);

/// Grouped bars: layer l (1..L) on x, one bar per series side by side within the group, in
/// series order (an empty series keeps its slot). Returns L (the longest series); the caller
/// sets the ranges with fitLayerBarAxes unless the user zoomed.
int layerBars(QCPAxis* x, QCPAxis* y, const std::vector<BarSeries>& series);

/// The ranges for layerBars' `layers` slots: x 0.4 .. L + 0.6; y over the bars, their error
/// bars and `keepInView` (threshold lines) with 5% headroom above (and below where a value is
/// negative), so no whisker ends on the frame where it would read as cut off (log axes: 5% of
/// the decades). On a linear axis, bars standing 10x or more above all the others (at most a
/// tenth of them, as divergingColourLimit: removing block 1 costs nats, a deep block
/// hundredths) run off the range, each with a white break across it and its value beside it,
/// so the others are readable. Also how resetZoom fits these axes from then on. Returns the
/// number of bars run off.
int fitLayerBarAxes(QCPAxis* x, QCPAxis* y, int layers, const std::vector<double>& keepInView = {});
/// The same for per-layer profiles drawn as graphs (Compare's final profiles): x over the
/// points with `keyMargin` either side, y over the points and their error bars with 5% room
/// above and below; a point 10x or more above all others runs off with its value beside it
/// (the lines leave the frame). Also how resetZoom fits them. Returns the points run off.
int fitLayerProfileAxes(QCPAxis* x, QCPAxis* y, double keyMargin);
/// The font of a value fitLayerBarAxes wrote beside a bar (kFitMarkProperty), keeping it its
/// line in the stack of its layer's values (kStackedLinesProperty: lines below the top frame,
/// negative: above the bottom one). Paper figures set theirs after drawing.
void setMarkFont(QCPItemText* label, const QFont& font);
inline constexpr char kStackedLinesProperty[] = "depthlabStackedLines";

/// One curve per layer of `s` (layer 1..L coloured light to dark, as layerColor()), named
/// "layer l", min/max-decimated to `columns` pixel columns over `window` (default: all steps;
/// columns <= 0 keeps every point). Returns the largest value drawn (0 when none). With the
/// series' `overview` (layerOverview, built by the loader off the GUI thread) and no window,
/// the curves come from it: the same extents, a tenth of the work on the GUI thread.
double layerCurves(QCPAxis* x, QCPAxis* y, const store::LayerSeries& s, double lineWidth,
                   int columns = 0, std::optional<std::pair<double, double>> window = std::nullopt,
                   const std::vector<DecimatedSeries>* overview = nullptr);

/// The colour map on exactly these axes (a live panel's), or a new one: sequential colours,
/// cells not interpolated.
QCPColorMap* colourMapOn(QCPAxis* x, QCPAxis* y);

/// How heatmaps of a metric are coloured, the same in every view (dashboard, Compare, paper):
/// signed metrics (the catalogue's diverging ones, differences) on blue-white-red centred on
/// white at 0; metrics the catalogue scales logarithmically on a log colour scale when their
/// values span two decades or more; angular distances bright where small, as in the paper.
struct ColourRule {
  bool diverging = false;
  bool logWhenSpread = false;
  bool smallIsBright = false;
};
/// The rule of a metric-catalogue key ("" or unknown: sequential, linear).
ColourRule colourRuleFor(const std::string& metric);

/// A colour map, the (min, max) of the values it shows, and the metric it shows.
struct Heatmap {
  QCPColorMap* map = nullptr;
  std::pair<double, double> range{0.0, 0.0};
  std::string metric;
};

/// Layer x step heatmap of `s` on the axes (x: step, y: layer 1..L), at most `maxColumns` step
/// columns, cells not interpolated; shareColourRange then colours it by `metric`'s rule. A colour map already on these
/// axes is reused (a live panel), else one is made. A single sample shows its step as the
/// only x tick (not a 0-1 axis).
Heatmap layerHeatmap(QCPAxis* x, QCPAxis* y, const store::LayerSeries& s, int maxColumns,
                     const std::string& metric = "");

/// The (l, n) matrix `m` on the axes (x: offset n, y: layer l); shareColourRange then colours
/// it by `metric`'s rule (angular distance: small = bright; block pruning: diverging), alone or
/// with the other runs' maps. `rowNormalise` scales each row to [0, 1].
Heatmap matrixHeatmap(QCPAxis* x, QCPAxis* y, const store::Matrix& m, bool rowNormalise,
                      const std::string& metric);

/// One colour scale across panels: every map gets its metric's gradient and the union of the
/// ranges, symmetric about 0
/// for a diverging metric, logarithmic where the rule asks and the values allow. Also for a
/// single map (sets its range and scale type). A diverging scale leaves out a few extreme
/// cells (see divergingColourLimit) and marks the maps so heatmapColourBar says so; where none
/// is left out and the values spread over decades it is symmetric-log (symlogLinearWidth): the
/// maps keep their values and a linear range, their gradients place the colours, and
/// heatmapColourBar draws the bar on the log positions with the values as tick labels.
void shareColourRange(const std::vector<Heatmap>& maps);

/// The half-range of a diverging colour scale over `magnitudes` (|value| of every cell):
/// the largest, unless at most a tenth of the cells stand 10x or more above all the others
/// (removing the first block costs nats where removing a deep one costs hundredths: on a
/// linear scale only layer 1 had a colour). Then the largest of the others, and
/// `*clipped` (when given) the number of cells left at the scale's end colours.
double divergingColourLimit(std::vector<double> magnitudes, int* clipped = nullptr);
/// The colour map property holding divergingColourLimit's count (read by heatmapColourBar).
inline constexpr char kClippedCellsProperty[] = "depthlabClippedCells";

/// A diverging scale's linear half-width for a symmetric-log colour scale over `magnitudes`
/// (|value| of every cell) up to `limit`, or 0 for a linear one. Symmetric-log where the
/// values spread widely with no few cells to leave out (the (l, n) block-pruning matrix: removing
/// blocks from layer 1 costs nats, from deep layers hundredths, many cells of each): the
/// largest magnitude 30x or more above the median. The linear half-width is a quarter of that
/// median, so the typical cell shows a clear colour.
double symlogLinearWidth(std::vector<double> magnitudes, double limit);
/// Where value `v` sits on a symmetric-log scale of half-range `limit` and linear half-width
/// `linear`: sign(v) log(1 + |v| / linear) / log(1 + limit / linear), in [-1, 1].
double symlogPosition(double v, double limit, double linear);
/// The colour map property holding symlogLinearWidth's width (0 or absent: linear scale).
inline constexpr char kSymlogProperty[] = "depthlabSymlogLinear";

/// One run's losses for lossOverlay().
struct LossRun {
  QString name;    // "pre_ln", "lns #2": the legend's text before the suffixes
  QColor colour;
  Qt::PenStyle trainStyle = Qt::SolidLine;
  std::vector<store::ScalarPoint> train, val;
  std::function<double(double)> keyOf;  // step -> x (tokens, time); empty = the step
};

/// How a view draws the losses: the dashboard smooths and keeps the raw curve faint beneath,
/// Compare smooths, the paper figure draws the raw values.
struct LossStyle {
  double smoothing = 0;            // EMA weight of the train curve (0: raw)
  bool rawUnderSmoothed = false;   // also the raw train curve, faint, not in the legend
  int columns = 0;                 // min/max decimation columns (0: every point)
  std::optional<std::pair<double, double>> window;  // decimation window (default: the data's)
  double trainWidth = 1.6, valWidth = 2.2;
  int trainAlpha = 255;
  bool valMarkers = true;          // circles on the validation points
  bool valInLegend = true;
  QString trainSuffix = QStringLiteral(" train"), valSuffix = QStringLiteral(" val");
};

/// Train (solid, or the run's style) and validation (dashed) losses of every run on the axes,
/// per run: [raw], train, val. Returns a note for every count of decimated curves, naming the
/// curves with that count together ("Pre-LN train, LNS train: 1500 of 20000 points").
QStringList lossOverlay(QCPAxis* x, QCPAxis* y, const std::vector<LossRun>& runs,
                        const LossStyle& style);
/// Fits the axes of lossOverlay's curves: x over the data (kept where `fitKeys` is false), y
/// over every curve on `y` with 5% room, except that a spike well above the highest starting
/// loss (each run's first logged loss, ~ln V at initialisation: a divergence, more than a
/// quarter of the curves' span above it) runs off the top, so the runs that train stay
/// readable: y stops at the starting losses and each run whose peak lies beyond is named at
/// the top with that peak and its step ("↑ post_ln: 9.87 at step 320"), in its colour.
/// Also how resetZoom fits the axes. Returns the runs run off.
int fitLossAxes(QCPAxis* x, QCPAxis* y, const std::vector<LossRun>& runs, bool fitKeys = true);

/// A labelled colour bar for `map` at (row, column) of its plot's layout (reused when the plot
/// has one): the heatmaps' scale, readable without a tooltip. Where shareColourRange clipped
/// the scale, a second label line says at what ("N cells beyond ±R").
QCPColorScale* heatmapColourBar(QCPColorMap* map, const QString& label, int row, int column);

/// The colour bar that stands in for a per-layer legend (layer 1..L, the curves' colours),
/// placed at (row, column) of the plot's layout; reused when one is there already.
QCPColorScale* layerColourBar(QCustomPlot* plot, int layers, int row, int column);

}  // namespace depthlab::ui::figures

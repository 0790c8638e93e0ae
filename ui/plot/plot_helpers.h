// QCustomPlot helpers shared by the dashboard panels: a heatmap from a per-layer series, a
// heatmap from a matrix, bar charts, hover tooltips with exact values, and zoom tracking
// (a plot the user zoomed or panned keeps its range while data streams in; double-click
// resets it).
#pragma once

#include <QPoint>
#include <QString>

#include <functional>
#include <vector>

#include "store/store_types.h"

class QCustomPlot;
class QCPAxis;
class QCPColorMap;
class QCPColorScale;
class QCPBars;

namespace depthlab::ui {

/// Sets up `plot` for interactive use: drag/zoom, double-click reset, hover tooltips. The wheel
/// scrolls the page around it; Ctrl+wheel zooms, and so does the wheel once a click gave the
/// plot focus (plot_wheel.h). A zoom or a drag that moves the view marks it zoomed (it stops
/// following new data); a click that does not move it does not.
void makeInteractive(QCustomPlot* plot);
/// The hover tooltip at `pos` (pixels): a colour map's cell and value (with its standard error
/// when the map has them), else the nearest graph point within 12 pixels, else the bar under
/// the cursor (with its error bar's +-); empty when nothing is there.
QString hoverText(QCustomPlot* plot, const QPoint& pos);
/// True when the user changed the view since the last reset.
bool userZoomed(const QCustomPlot* plot);
void setUserZoomed(QCustomPlot* plot, bool zoomed);
/// Back to following the data: the plot's own fit (setRefit) where it has one, else every
/// axis rescaled to its data; the legend placed again (figures::placeLegend, beside the plot
/// when no corner is free).
void resetZoom(QCustomPlot* plot);
/// How resetZoom fits `plot` (bar panels keep their headroom and off-scale marks); replaces
/// the one set before.
void setRefit(QCustomPlot* plot, std::function<void()> fit);
/// The item property marking what a fit drew for the view it chose (off-scale marks): hidden
/// while the user zooms, since they describe the fitted range.
inline constexpr char kFitMarkProperty[] = "depthlabFitMark";
/// Shows "zoomed: not following new data (double-click to follow)" above the plot's data (the
/// label of its top axis, in a margin of its own: it covers no data) while it is zoomed, hides
/// it otherwise (and the fit's marks the other way round). Returns whether it shows.
bool updateZoomBadge(QCustomPlot* plot);
/// The zoom notice the plot shows ("" when none).
QString zoomBadgeText(const QCustomPlot* plot);
/// True when the last mouse release on the plot was a click (no drag): the position pressed.
bool wasClick(const QCustomPlot* plot, const QPoint& releasePos);
/// Every plotted value as CSV (series,x,y,value,standard_error): graphs and bars (series, x,
/// y, and the error bar's +- when one is attached) and colour maps (map, x, y,
/// value, and the cell's standard error when setCellErrors gave them). Empty fields where a
/// value does not apply. Returns false when the file cannot be written.
bool savePlotCsv(QCustomPlot* plot, const QString& path);
QString plotCsv(QCustomPlot* plot);
/// A right-click menu on the plot: Save PNG…, Save CSV… (file names start with `baseName`)
/// and Reset zoom. For views without a menu of their own (Compare).
void addSaveMenu(QCustomPlot* plot, const QString& baseName);

/// Fills a colour map with a layer x step heatmap (x: step, y: layer 1..L), at most
/// `maxColumns` step columns (nearest sample). Returns the data range (min, max), NaN-safe.
std::pair<double, double> fillLayerHeatmap(QCPColorMap* map, const store::LayerSeries& s,
                                           int maxColumns);
/// Fills a colour map with a rows x cols matrix (x: column + 1, y: row + 1). `rowNormalize`
/// min-max scales each row to [0, 1] (the paper's view). NaN cells are left blank.
std::pair<double, double> fillMatrixHeatmap(QCPColorMap* map, const store::Matrix& m,
                                            bool rowNormalize);
/// Gives a colour map filled by fillMatrixHeatmap the standard error of each cell (the same
/// rows x cols layout), which its hover tooltip shows as "value v +- e"; nullptr clears them.
void setCellErrors(QCPColorMap* map, const store::Matrix* errors);
/// Values of a per-layer series at exactly `step` (empty if it has no row there).
std::vector<float> layerValuesExactlyAt(const store::LayerSeries& s, int64_t step);
/// Index of the step nearest `x` in sorted, non-empty `steps` (a tie goes to the later step):
/// how heatmap columns pick their row (RunStore::layerSeriesSampled picks by the same rule).
size_t nearestStepIndex(const std::vector<int64_t>& steps, double x);
/// Values of a per-layer series at the last step <= `step` (empty if none).
std::vector<float> layerValuesAt(const store::LayerSeries& s, int64_t step, int64_t* foundStep = nullptr);
/// A value axis logarithmic (with decade ticks) or linear; nothing when it already is.
void setLogScale(QCPAxis* axis, bool log);
/// Exponential moving average with weight `alpha` in [0, 1) (0 = none).
std::vector<store::ScalarPoint> smooth(const std::vector<store::ScalarPoint>& p, double alpha);

}  // namespace depthlab::ui

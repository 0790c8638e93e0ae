// Making a drawn figure readable at its size: tick spacing from the physical size and the
// font (labels never collide), titles that fit their panel, and a legend that never covers
// data (the emptiest inside corner, else outside, below the plot). Works on any QCustomPlot
// (dashboard panels, Compare, paper figures) after the data is drawn; measures text with the
// fonts the plot paints with. Also the measurements tests check it by: label and legend boxes.
// Defined in figure_layout.cpp (lay-out, ticks, titles, fitOnResize) and legend_placement.cpp
// (dataPixels, placeLegend, pointsUnderLegend).
#pragma once

#include <QRectF>
#include <QString>

#include <vector>

class QCPAxis;
class QCPAxisRect;
class QCPLegend;
class QCustomPlot;

namespace depthlab::ui::figures {

/// Lays the plot out at its viewport's size as a replot would (tick vectors, margins, every
/// element's rect) without drawing anything: what the fitting below measures. A plot of a
/// dozen curves costs a few milliseconds to draw and far less to lay out.
void layOut(QCustomPlot* plot);

/// One tick label's box in the plot's pixel coordinates.
struct LabelBox {
  QString text;
  QRectF box;
};

/// The tick labels `axis` draws now (after a replot or layOut), with their boxes.
std::vector<LabelBox> tickLabelBoxes(QCPAxis* axis);
/// True when two boxes of `boxes` overlap or come closer than `gap` pixels along the axis.
bool labelsCollide(const std::vector<LabelBox>& boxes, double gap);
/// Every axis of the plot that shows tick labels (axis rects and colour scales).
std::vector<QCPAxis*> labelledAxes(QCustomPlot* plot);

/// Lowers each axis's tick count until its labels keep a gap of half the font's height
/// (lays the plot out again as it goes; at most a few rounds). Call after the plot has its final size.
void fitTickLabels(QCustomPlot* plot);
/// Shortens every axis title longer than its axis: first to the part before a parenthesis
/// ("loss (train; validation dashed)" -> "loss"), then onto two lines broken at the space
/// nearest the middle where both fit, else elided.
void fitAxisLabels(QCustomPlot* plot);
/// `text` broken onto two lines at the space nearest its middle (unchanged without a space).
QString onTwoLines(const QString& text);
/// Elides every title text element wider than its panel (the full text stays as tooltip-free
/// data in the element's "fullText" property; a title given a new text since it was last
/// fitted is fitted from that text).
void fitTitles(QCustomPlot* plot);

/// Pixel points the plottables of `rect` draw (graph points and the points along their
/// lines, bar tops and bodies, and the values written beside bars run off the range), for
/// placing a legend where it hides nothing.
std::vector<QPointF> dataPixels(QCPAxisRect* rect);
/// Where a legend goes when no inside corner is free: below the axis rect, entries side by
/// side (paper figures), or to its right, one column (live views: their height is fixed).
enum class LegendOutside { Below, Right };
/// Puts the plot's legend in an inside corner of `rect` that covers no data (top right first);
/// else makes room above the data (the value axis reaches higher) when the legend takes less
/// than half the height; else moves it outside. Lays the plot out to measure (the caller
/// replots). Returns true when inside. A legend with no entries is hidden until it has some
/// (a legend hidden by its owner is left hidden).
bool placeLegend(QCustomPlot* plot, QCPAxisRect* rect, LegendOutside outside = LegendOutside::Below);
/// The data points the legend's box covers now (0 when placed well).
int pointsUnderLegend(QCustomPlot* plot, QCPAxisRect* rect);
/// Fits the titles (fitTitles), the tick labels (fitTickLabels, from each axis's first tick
/// count) and places the legend (when shown) again whenever the plot is resized, then replots: a live view is laid
/// out after its data was drawn, and what fits depends on the final size.
void fitOnResize(QCustomPlot* plot);

}  // namespace depthlab::ui::figures

// The marks a paper figure's panel draws (bars, error bars, graph lines and points, scatter
// markers) and the labels written into it (values of bars run off the range, loss peaks, a
// legend inside the panel), in figure coordinates (1 pixel = 1 pt), and the fits that keep
// labels at the top frame off every other mark: the values of one layer on one line, and
// headroom on the value axis. Measures the
// laid-out plot; draws nothing and places no legend (plot/figure_layout.h does).
#pragma once

#include <QLineF>
#include <QRectF>
#include <QString>

#include <vector>

class QCPAxisRect;
class QCPItemText;
class QCustomPlot;

namespace depthlab::ui::paper {

/// A drawn mark: a box (bar, error bar, marker) or a line segment (a graph's line).
struct Mark {
  QRectF box;   // the segment's bounding box for a line
  QLineF line;  // set for line segments only
  bool isLine = false;
  QString what;  // "bar layer 2 of LNS", "error bar ...", "line of Pre-LN"
};

/// A text label or the legend inside the panel, with its box.
struct Label {
  QRectF box;
  QString text;
  bool legend = false;
};

/// A text item's own box, without the padding that stacks values at a frame.
QRectF textBox(QCPItemText* t);
/// Writes the values of bars run off the range at one layer side by side on one line at the
/// frame (they were stacked, one line each, over the next layers' bars), where the panel has
/// the width; each keeps its colour.
void lineUpFitValues(QCustomPlot* plot);
/// Every mark of `rect`'s plottables, clipped to the rect (what lies outside is not drawn).
std::vector<Mark> panelMarks(QCPAxisRect* rect);
/// The visible text items placed in `rect` and the legend when it sits inside `rect`.
std::vector<Label> panelLabels(QCPAxisRect* rect);
/// Whether `mark` touches `box` (a segment: crosses it).
bool markTouches(const Mark& mark, const QRectF& box);
/// Raises the linear value axis of `rect` until no label at its top frame (a legend or a value
/// written there) covers a mark that stays below the frame; marks run off the range are left as
/// they are. Returns true when it changed the range (the caller lays the plot out again).
bool raiseOverLabels(QCustomPlot* plot, QCPAxisRect* rect);

}  // namespace depthlab::ui::paper

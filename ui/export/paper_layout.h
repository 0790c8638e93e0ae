// The paper look of an exported figure and its layout at physical size (1 pixel = 1 pt): fonts,
// pens and compact legends; a grid of titled panels fitted to the width; the colour bar beside or
// below the panels; and the final fit at the figure's size (titles, tick labels, axis titles and
// the legend made readable by plot/figure_layout.h). What is drawn in the panels is
// figure_export.cpp's business; this file only arranges and styles.
#pragma once

#include <QSize>
#include <QStringList>

#include <vector>

#include "export/figure_style.h"

class QCPAxisRect;
class QCPColorScale;
class QCustomPlot;

namespace depthlab::ui::paper {

/// White background, the style's font at its point size, thin pens, compact legends.
void applyPaperStyle(QCustomPlot* plot, const FigureStyle& s);
/// Panels per row for `n` panels at this width: each at least ~2.8 cm wide, rows filled evenly.
int panelColumns(int n, double widthPt);
/// One titled axis rect per title in a grid of `columns` (row-major), axes aligned.
std::vector<QCPAxisRect*> panelGrid(QCustomPlot* plot, const QStringList& titles, int columns);
/// Whether a figure this wide puts its colour bar below the panels (else beside them).
bool colourBarBelow(const FigureStyle& s);
/// Moves `bar` below the panels, horizontal, when colourBarBelow says so.
void placeColourBar(QCPColorScale* bar, const FigureStyle& s);
/// Sizes the drawn figure to `sizePt` and makes its text readable there; `legendInPanel`: the
/// figure has a legend to place over (or beside) its single panel.
void fitToSize(QCustomPlot* plot, const QSize& sizePt, bool legendInPanel);

}  // namespace depthlab::ui::paper

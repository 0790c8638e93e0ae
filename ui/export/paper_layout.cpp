// See paper_layout.h.
#include "export/paper_layout.h"

#include <qcustomplot.h>

#include <QFontMetricsF>

#include <algorithm>
#include <cmath>

#include "export/figure_marks.h"
#include "plot/figure_builders.h"
#include "plot/figure_layout.h"
#include "plot/plot_helpers.h"

namespace depthlab::ui::paper {

void applyPaperStyle(QCustomPlot* plot, const FigureStyle& s) {
  // The figure is laid out with 1 pixel = 1 pt and saved that way (PDF, SVG, PNG at its DPI),
  // so a font of `fontPt` points must be `fontPt` pixels tall on the plot's own device.
  QFont f(s.fontFamily);
  f.setPointSizeF(s.fontPt * 72.0 / std::max(1, plot->logicalDpiY()));
  plot->setFont(f);
  plot->setBackground(Qt::white);
  std::vector<QCPAxis*> axes;
  for (auto* rect : plot->axisRects()) {
    for (auto* axis : rect->axes()) axes.push_back(axis);
  }
  for (auto* element : plot->plotLayout()->elements(true)) {
    if (auto* scale = qobject_cast<QCPColorScale*>(element)) {
      axes.push_back(scale->axis());
      scale->setBarWidth(static_cast<int>(std::lround(0.7 * s.fontPt)));
    }
  }
  {
    for (auto* axis : axes) {
      axis->ticker()->setTickCount(4);  // few, readable ticks at column width
      axis->setTickLengthIn(3);
      axis->setSubTickLengthIn(1);
      axis->setPadding(2);
      axis->setLabelPadding(2);
      axis->setLabelFont(f);
      axis->setTickLabelFont(f);
      axis->setBasePen(QPen(Qt::black, 0.6 * s.lineWidth));
      axis->setTickPen(QPen(Qt::black, 0.6 * s.lineWidth));
      axis->setSubTickPen(QPen(Qt::black, 0.4 * s.lineWidth));
      axis->grid()->setPen(QPen(QColor(225, 225, 225), 0.4 * s.lineWidth));
      axis->grid()->setSubGridVisible(false);
    }
  }
  for (auto* rect : plot->axisRects()) rect->insetLayout()->setMargins(QMargins(3, 3, 3, 3));  // legend near the frame
  plot->plotLayout()->setRowSpacing(0);
  plot->plotLayout()->setColumnSpacing(2);
  for (auto* element : plot->plotLayout()->elements(true)) {
    if (auto* t = qobject_cast<QCPTextElement*>(element)) {
      t->setFont(f);
      t->setMargins(QMargins(0, 2, 0, 0));
    }
  }
  for (int i = 0; i < plot->itemCount(); ++i) {  // off-scale bars' values and breaks
    auto* item = plot->item(i);
    if (!item->property(kFitMarkProperty).toBool()) continue;
    if (auto* t = qobject_cast<QCPItemText*>(item)) figures::setMarkFont(t, f);
    if (auto* l = qobject_cast<QCPItemLine*>(item)) l->setPen(QPen(Qt::white, 1.5 * s.lineWidth));
  }
  if (plot->legend) {  // compact, at the figure's scale (1 px = 1 pt)
    plot->legend->setFont(f);
    plot->legend->setBorderPen(Qt::NoPen);
    plot->legend->setBrush(QColor(255, 255, 255, 220));
    plot->legend->setIconSize(static_cast<int>(std::lround(2.2 * s.fontPt)), static_cast<int>(std::lround(0.7 * s.fontPt)));
    plot->legend->setIconTextPadding(static_cast<int>(std::lround(0.4 * s.fontPt)));
    plot->legend->setRowSpacing(0);
    plot->legend->setColumnSpacing(static_cast<int>(std::lround(s.fontPt)));
    plot->legend->setMargins(QMargins(2, 1, 2, 1));
    for (int i = 0; i < plot->legend->itemCount(); ++i) plot->legend->item(i)->setMargins(QMargins(1, 0, 1, 0));
  }
}

// Panels per row at this width: each at least ~2.8 cm wide (80 pt), as few rows as that
// allows, the rows filled evenly (4 runs: 2 x 2 rather than 3 + 1).
int panelColumns(int n, double widthPt) {
  n = std::max(1, n);
  const int most = std::clamp(static_cast<int>(widthPt / 80.0), 1, n);
  const int rows = (n + most - 1) / most;
  return (n + rows - 1) / rows;
}

// One titled axis rect per run in a grid of `columns` (row-major) nested in the plot's first
// layout cell, so a colour bar can stand beside all of them at (0, 1). Axes line up across
// rows and columns.
std::vector<QCPAxisRect*> panelGrid(QCustomPlot* plot, const QStringList& titles, int columns) {
  plot->plotLayout()->clear();
  auto* grid = new QCPLayoutGrid;
  plot->plotLayout()->addElement(0, 0, grid);
  grid->setColumnSpacing(6);
  grid->setRowSpacing(2);
  std::vector<QCPAxisRect*> rects;
  std::vector<QCPMarginGroup*> columnGroups, rowGroups;
  const int rows = (static_cast<int>(titles.size()) + columns - 1) / columns;
  for (int c = 0; c < columns; ++c) columnGroups.push_back(new QCPMarginGroup(plot));
  for (int r = 0; r < rows; ++r) rowGroups.push_back(new QCPMarginGroup(plot));
  for (int i = 0; i < titles.size(); ++i) {
    const int r = i / columns, c = i % columns;
    auto* title = new QCPTextElement(plot, titles[i]);
    grid->addElement(2 * r, c, title);
    auto* rect = new QCPAxisRect(plot);
    rect->setMinimumSize(20, 20);  // QCustomPlot's 50 x 50 would squeeze the colour bar out
    rect->setAutoMargins(QCP::msLeft | QCP::msRight | QCP::msBottom);  // the title sits right above
    rect->setMargins(QMargins(0, 4, 0, 0));
    grid->addElement(2 * r + 1, c, rect);
    rect->setMarginGroup(QCP::msLeft | QCP::msRight, columnGroups[static_cast<size_t>(c)]);
    rect->setMarginGroup(QCP::msTop | QCP::msBottom, rowGroups[static_cast<size_t>(r)]);
    rects.push_back(rect);
  }
  for (int r = 0; r < grid->rowCount(); ++r) grid->setRowStretchFactor(r, r % 2 == 0 ? 0.001 : 1.0);
  return rects;
}

// Where a figure's colour bar goes: beside the panels (a vertical bar at (0, 1)) when the
// figure is wide enough, else below them, horizontal, across the whole width (narrow columns
// cannot spare the bar's width).
bool colourBarBelow(const FigureStyle& s) { return s.widthPt < 300; }

void placeColourBar(QCPColorScale* bar, const FigureStyle& s) {
  if (!colourBarBelow(s)) return;
  auto* grid = bar->parentPlot()->plotLayout();
  grid->take(bar);
  grid->simplify();  // the bar's empty column goes
  bar->setMarginGroup(QCP::msAll, nullptr);  // no longer aligned with a panel's top and bottom
  bar->setType(QCPAxis::atBottom);
  grid->addElement(1, 0, bar);
}

// Sizes the drawn figure to its physical size and makes its text readable there: titles that
// fit, the legend where it hides no data, tick labels that never collide.
void fitToSize(QCustomPlot* plot, const QSize& sizePt, bool legendInPanel) {
  // A colour bar beside or below the panels keeps its size; the panels take what is left.
  if (plot->plotLayout()->columnCount() == 2) plot->plotLayout()->setColumnStretchFactors({1.0, 0.001});
  if (plot->plotLayout()->rowCount() == 2) plot->plotLayout()->setRowStretchFactors({1.0, 0.001});
  plot->resize(sizePt);
  plot->setViewport(QRect(QPoint(0, 0), sizePt));
  figures::fitTitles(plot);
  figures::fitTickLabels(plot);
  figures::fitAxisLabels(plot);
  if (legendInPanel) {
    // Ticks, legend and the values written at the top frame move each other (a legend below
    // shrinks the axes; new ticks move the data under an inside legend; room above the data
    // for a value or the legend moves the data again): settle them together. The legend and
    // the values must clear error bars too, which the legend's own placement does not see.
    for (int round = 0; round < 4; ++round) {
      lineUpFitValues(plot);
      figures::placeLegend(plot, plot->axisRect());
      figures::fitTickLabels(plot);
      figures::fitAxisLabels(plot);
      if (raiseOverLabels(plot, plot->axisRect())) continue;
      if (figures::pointsUnderLegend(plot, plot->axisRect()) == 0) break;
    }
  }
  // A colour bar first laid out with no room keeps an empty gradient image: redraw it now.
  for (auto* element : plot->plotLayout()->elements(true)) {
    if (auto* scale = qobject_cast<QCPColorScale*>(element)) {
      const auto gradient = scale->gradient();
      scale->setGradient(QCPColorGradient(QCPColorGradient::gpGrayscale));
      scale->setGradient(gradient);
    }
  }
  plot->replot(QCustomPlot::rpImmediateRefresh);
}

}  // namespace depthlab::ui::paper

// The window's plots in the window's palette: on a dark palette (the system's, or
// DEPTHLAB_PALETTE=dark) a LivePlot takes the palette's base as its background and its text
// colour for axes, tick labels, titles, legends and the near-black marks (error bars, value
// labels, cursor lines) that would vanish on it; scheme colours and colour maps stay. A light
// palette leaves QCustomPlot's own colours as they are. Exported figures never use this: paper
// figures keep their paper colours. Also the colour of secondary text (hints, notes) that reads
// on either palette.
#pragma once

#include <QColor>
#include <QPalette>
#include <QString>

class QCustomPlot;

namespace depthlab::ui {

/// True when the palette's window colour is darker than mid-grey.
bool paletteIsDark(const QPalette& palette);
/// Recolours `plot` for a dark `palette` (see above); does nothing for a light one. Marks
/// already recoloured are left alone, so calling it before every replot costs a walk only.
void applyDarkPalette(QCustomPlot* plot, const QPalette& palette);
/// Secondary text: the palette's window text at 65% opacity, as a style sheet ("color: ...").
QString mutedTextStyle(const QPalette& palette);
/// A Fusion palette in dark colours (DEPTHLAB_PALETTE=dark, and tests).
QPalette darkFusionPalette();

}  // namespace depthlab::ui

// Axes that stay readable as a live panel's data and size change between the fits that run on
// a resize (figure_layout.h): tick steps chosen for the axis's length at every replot (whole
// numbers for layer axes), and a one- or two-line axis title chosen before every replot. Does
// not place legends or elide panel titles.
#pragma once

#include <QString>

class QCPAxis;

namespace depthlab::ui::figures {

/// Gives a horizontal axis QCustomPlot's ticker with one change: at each replot its tick count
/// comes down (never up) until the labels keep half a line's height apart at the length the
/// axis had at its last layout. A live panel whose steps grow from 100 to 20,000 keeps
/// readable labels between resizes (fitTickLabels, which runs on a resize, still lowers the
/// count it starts from). Only a plain QCPAxisTicker is replaced (log, text and fixed tickers
/// are left); the tick count carries over. `wholeNumbers`: ticks only on whole numbers (a layer
/// axis: 2, 4, 6, never 2.5, 5, 7.5); called again, it switches that alone.
void useLengthAwareTicks(QCPAxis* axis, bool wholeNumbers = false);
/// Tick labels of a count axis (tokens) written short: 100k, 1.5M, 2B; an axis that
/// useLengthAwareTicks set up (its steps are chosen for these labels' widths). `on` false: plain
/// numbers again.
void useCountTicks(QCPAxis* axis, bool on);
/// A count as such a tick reads: "950", "100k", "1.5M", "2B" (four significant figures at most).
QString compactCount(double n);
/// Gives `axis` the title `oneLine` where it fits along the axis, else `twoLines`, and picks
/// again before every replot at the axis length of that moment: a live panel resized after it
/// drew (the dashboard's cursor bars) had kept a title chosen for its old length.
void setAxisTitleToFit(QCPAxis* axis, const QString& oneLine, const QString& twoLines);

}  // namespace depthlab::ui::figures

// The mouse wheel over a plot in a scrolling view: it scrolls the view, as it does over any
// other part of the page; the plot zooms with Ctrl+wheel, or with the plain wheel once a click
// gave it focus (as the set-up panel's spin boxes take the wheel only when focused). Resting
// the pointer on a plot while scrolling a dashboard no longer zooms it.
#pragma once

class QCustomPlot;

namespace depthlab::ui {

/// Makes `plot` take the wheel only with Ctrl or while it has focus (a click gives it); other
/// wheel events go to the scroll bar of the nearest scroll area around it.
void wheelScrollsUnlessAsked(QCustomPlot* plot);

}  // namespace depthlab::ui

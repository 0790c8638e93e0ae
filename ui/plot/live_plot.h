// A QCustomPlot for panels that replot often (the dashboard, Compare): one paint buffer, opaque.
// QCustomPlot clears its buffers to transparent at every replot, then its paintEvent fills the
// widget with the background brush and blends each buffer over it pixel by pixel. Here the
// bottom buffer is cleared to the background colour and, when it is the only one, the widget
// paints just that buffer, copied: the same pixels to rounding (what the layers draw lands on
// the background colour either way; antialiased edges may differ by 1/255), less work per
// frame (2-3% of a dashboard panel's replot, 7% of a panel 1,900 pixels wide).
// Nothing changes in how the layers draw into the buffer, nor in exports (toPainter, savePdf
// and savePng draw the layers directly, without paint buffers). It falls back to QCustomPlot's
// own painting while the background is not one opaque colour, a background pixmap is set, or
// a layer has a buffer of its own.
// On a dark palette every replot first recolours what is new for it (plot_theme.h).
// replotWhenShown() replots a panel that is on screen and leaves one scrolled out of view, in a
// hidden tab or not yet shown stale: it replots when it is next painted (scrolled into view,
// shown, grabbed), so new rows cost the GUI thread only the panels in view.
#pragma once

#include <qcustomplot.h>

namespace depthlab::ui {

class LivePlot : public QCustomPlot {
 public:
  explicit LivePlot(QWidget* parent = nullptr);
  /// True while the widget paints its opaque buffer alone (the fast path).
  bool paintsOpaqueBuffer() const;
  /// The colour the buffer is cleared to: the background brush's colour while that is one
  /// opaque colour and no background pixmap is set, else transparent (QCustomPlot's own).
  QColor bufferClearColour() const;
  /// A queued replot when any part of the widget is on screen; otherwise the replot waits for
  /// the next paint. What the dashboard asks for when its data or cursor changed.
  void replotWhenShown();
  /// True while a replot waits for the widget to be painted.
  bool replotPending() const { return m_replotPending; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  bool m_replotPending = false;
};

/// LivePlot::replotWhenShown for a LivePlot, a queued replot for any other QCustomPlot.
void replotWhenShown(QCustomPlot* plot);

}  // namespace depthlab::ui

// See live_plot.h.
#include "plot/live_plot.h"

#include "plot/plot_theme.h"

namespace depthlab::ui {

namespace {

// QCustomPlot's pixmap buffer, cleared to its plot's bufferClearColour() instead of the colour
// QCustomPlot asks for (transparent).
class OpaquePixmapBuffer : public QCPPaintBufferPixmap {
 public:
  OpaquePixmapBuffer(const QSize& size, double ratio, const LivePlot* plot)
      : QCPPaintBufferPixmap(size, ratio), m_plot(plot) {}
  void clear(const QColor&) override { QCPPaintBufferPixmap::clear(m_plot->bufferClearColour()); }

 private:
  const LivePlot* m_plot;
};

}  // namespace

LivePlot::LivePlot(QWidget* parent) : QCustomPlot(parent) {
  // One paint buffer: the "overlay" layer (the selection rectangle, which these panels do not
  // use) has a buffer of its own by default, cleared and blended onto the widget on every
  // replot whether it holds anything or not (a third of a full-dashboard replot).
  layer(QStringLiteral("overlay"))->setMode(QCPLayer::lmLogical);
  // The first paint buffer is ours before QCustomPlot makes one: it makes one only when it
  // has none, and keeps the first whatever the layers' modes.
  mPaintBuffers.append(QSharedPointer<QCPAbstractPaintBuffer>(
      new OpaquePixmapBuffer(viewport().size(), bufferDevicePixelRatio(), this)));
  // Any replot (a zoom, a resize) brings the buffer up to date and, on a dark palette, takes
  // what was added since into the palette's colours.
  connect(this, &QCustomPlot::beforeReplot, this, [this] {
    m_replotPending = false;
    applyDarkPalette(this, palette());
  });
}

QColor LivePlot::bufferClearColour() const {
  const bool opaque = mBackgroundBrush.style() == Qt::SolidPattern &&
                      mBackgroundBrush.color().alpha() == 255 && mBackgroundPixmap.isNull();
  return opaque ? mBackgroundBrush.color() : QColor(Qt::transparent);
}

bool LivePlot::paintsOpaqueBuffer() const {
  return bufferClearColour().alpha() == 255 && mPaintBuffers.size() == 1 &&
         dynamic_cast<const OpaquePixmapBuffer*>(mPaintBuffers.front().data()) != nullptr;
}

void LivePlot::replotWhenShown() {
  // (The replot itself clears a pending one: see the constructor.)
  if (isVisible() && !visibleRegion().isEmpty()) {
    replot(QCustomPlot::rpQueuedReplot);
  } else {
    m_replotPending = true;
  }
}

void replotWhenShown(QCustomPlot* plot) {
  if (auto* live = dynamic_cast<LivePlot*>(plot)) {
    live->replotWhenShown();
  } else {
    plot->replot(QCustomPlot::rpQueuedReplot);
  }
}

void LivePlot::paintEvent(QPaintEvent* event) {
  // Exposed (scrolled into view, shown, grabbed) since its data changed: draw the buffer
  // painted below first.
  if (m_replotPending) replot(QCustomPlot::rpQueuedRefresh);
  if (!paintsOpaqueBuffer()) {
    QCustomPlot::paintEvent(event);
    return;
  }
  QCPPainter painter(this);
  if (painter.isActive()) mPaintBuffers.front()->draw(&painter);
}

}  // namespace depthlab::ui

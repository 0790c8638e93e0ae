// See plot_wheel.h.
#include "plot/plot_wheel.h"

#include <qcustomplot.h>

#include <QAbstractScrollArea>
#include <QApplication>
#include <QScrollBar>
#include <QWheelEvent>

#include <cstdlib>

namespace depthlab::ui {

namespace {

// Owned by the plot: passes the wheel on to the page unless the user asked the plot to zoom.
class WheelGate : public QObject {
 public:
  explicit WheelGate(QCustomPlot* plot) : QObject(plot), m_plot(plot) {}

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (watched != m_plot || event->type() != QEvent::Wheel) return false;
    auto* wheel = static_cast<QWheelEvent*>(event);
    if (wheel->modifiers().testFlag(Qt::ControlModifier) || m_plot->hasFocus()) return false;  // zoom
    for (QWidget* w = m_plot->parentWidget(); w; w = w->parentWidget()) {
      if (auto* area = qobject_cast<QAbstractScrollArea*>(w)) {
        const bool sideways = std::abs(wheel->angleDelta().x()) > std::abs(wheel->angleDelta().y());
        QApplication::sendEvent(sideways ? area->horizontalScrollBar() : area->verticalScrollBar(), wheel);
        return true;
      }
    }
    wheel->ignore();  // no page to scroll: the parents may use it, the plot does not
    return true;
  }

 private:
  QCustomPlot* m_plot;
};

}  // namespace

void wheelScrollsUnlessAsked(QCustomPlot* plot) {
  plot->setFocusPolicy(Qt::ClickFocus);
  plot->installEventFilter(new WheelGate(plot));
}

}  // namespace depthlab::ui

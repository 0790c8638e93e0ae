// A panel title (a QCPTextElement) that never holds its panel wider than a few dozen pixels:
// it is elided to the width the layout gives it when drawn. The dashboard puts one panel per
// scheme in a row, and a full-width title ("Post-LN — block pruning (l, n), end of run",
// ~300 px) made four schemes' rows wider than the window. Does not wrap text onto two lines.
#pragma once

#include <qcustomplot.h>

namespace depthlab::ui::figures {

class ElidingTitle : public QCPTextElement {
 public:
  /// `minimumWidth`: the most width, in pixels, the title asks of its panel.
  ElidingTitle(QCustomPlot* plot, const QString& text, int minimumWidth = 60);
  /// The text as drawn at the width the title has now ("Post-LN — block pruning (l, n), e…");
  /// text() stays the whole title.
  QString shownText() const;

 protected:
  QSize minimumOuterSizeHint() const override;
  void draw(QCPPainter* painter) override;

 private:
  int m_minimumWidth;
};

}  // namespace depthlab::ui::figures

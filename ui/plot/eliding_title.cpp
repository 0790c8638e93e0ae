// See eliding_title.h.
#include "plot/eliding_title.h"

#include <QFontMetricsF>

#include <algorithm>

namespace depthlab::ui::figures {

ElidingTitle::ElidingTitle(QCustomPlot* plot, const QString& text, int minimumWidth)
    : QCPTextElement(plot, text), m_minimumWidth(minimumWidth) {}

QString ElidingTitle::shownText() const {
  const QFontMetricsF fm(mainFont(), mParentPlot);
  return fm.elidedText(mText, Qt::ElideRight, mRect.width());
}

QSize ElidingTitle::minimumOuterSizeHint() const {
  QSize size = QCPTextElement::minimumOuterSizeHint();
  size.setWidth(std::min(size.width(), m_minimumWidth));
  return size;
}

void ElidingTitle::draw(QCPPainter* painter) {
  // QCPTextElement::draw, with the text elided to the title's rect
  painter->setFont(mainFont());
  painter->setPen(QPen(mainTextColor()));
  painter->drawText(mRect, mTextFlags, shownText(), &mTextBoundingRect);
}

}  // namespace depthlab::ui::figures

// See axis_fit.h.
#include "plot/axis_fit.h"

#include <qcustomplot.h>

#include <QFontMetricsF>
#include <QPointer>

#include <algorithm>
#include <cmath>
#include <typeinfo>

#include "plot/figure_layout.h"

namespace depthlab::ui::figures {

namespace {

// See useLengthAwareTicks.
class LengthAwareTicker : public QCPAxisTicker {
 public:
  explicit LengthAwareTicker(QCPAxis* axis) : m_axis(axis) {}
  void setWholeNumbers(bool on) { m_wholeNumbers = on; }
  void setCounts(bool on) { m_counts = on; }

 protected:
  QString getTickLabel(double tick, const QLocale& locale, QChar formatChar, int precision) override {
    if (m_counts) return compactCount(tick);
    return QCPAxisTicker::getTickLabel(tick, locale, formatChar, precision);
  }

  double getTickStep(const QCPRange& range) override {
    const double wanted = whole(QCPAxisTicker::getTickStep(range));
    if (!m_axis || m_axis->orientation() != Qt::Horizontal || m_axis->tickLabelRotation() != 0 ||
        !m_axis->axisRect() || !(range.size() > 0)) {
      return wanted;
    }
    const double length = m_axis->axisRect()->width();
    if (length <= 0) return wanted;  // not laid out yet
    const QFontMetricsF fm(m_axis->tickLabelFont(), m_axis->parentPlot());
    const double gap = 0.5 * fm.height();  // as fitTickLabels asks
    const QLocale locale = m_axis->parentPlot()->locale();
    const QString format = m_axis->numberFormat();
    const QChar formatChar = format.isEmpty() ? QLatin1Char('g') : format.at(0);
    const int precision = m_axis->numberPrecision();
    double step = wanted;
    for (int count = tickCount(); count >= 1; --count) {
      if (count < tickCount())
        step = std::max(step, whole(cleanMantissa(range.size() / (count + 1e-10))));
      // The widest label is at one of the ends (the most digits, a minus sign).
      const double first = std::ceil(range.lower / step) * step;
      const double last = std::floor(range.upper / step) * step;
      double widest = 0;
      for (double v : {first, last, first + step, last - step}) {
        widest =
            std::max(widest, fm.horizontalAdvance(getTickLabel(v, locale, formatChar, precision)));
      }
      if (step / range.size() * length >= widest + gap) return step;
    }
    return step;
  }

 private:
  // A step between whole numbers made one (layers: 2.5 -> 2, 0.5 -> 1).
  double whole(double step) const {
    if (!m_wholeNumbers) return step;
    if (step < 1) return 1;
    return std::abs(step - std::round(step)) > 1e-9 ? std::floor(step) : step;
  }

  QPointer<QCPAxis> m_axis;
  bool m_wholeNumbers = false;
  bool m_counts = false;  // labels as compactCount
};

}  // namespace

void useLengthAwareTicks(QCPAxis* axis, bool wholeNumbers) {
  const auto current = axis->ticker();
  if (auto ticker = current.dynamicCast<LengthAwareTicker>()) {
    ticker->setWholeNumbers(wholeNumbers);
    return;
  }
  if (!current || typeid(*current) != typeid(QCPAxisTicker)) return;
  QSharedPointer<LengthAwareTicker> ticker(new LengthAwareTicker(axis));
  ticker->setTickCount(current->tickCount());
  ticker->setTickOrigin(current->tickOrigin());
  ticker->setTickStepStrategy(current->tickStepStrategy());
  ticker->setWholeNumbers(wholeNumbers);
  axis->setTicker(ticker);
}

void useCountTicks(QCPAxis* axis, bool on) {
  if (auto ticker = axis->ticker().dynamicCast<LengthAwareTicker>()) ticker->setCounts(on);
}

QString compactCount(double n) {
  const double a = std::abs(n);
  const char* suffix = "";
  double scaled = n;
  if (a >= 1e9) { scaled = n / 1e9; suffix = "B"; }
  else if (a >= 1e6) { scaled = n / 1e6; suffix = "M"; }
  else if (a >= 1e3) { scaled = n / 1e3; suffix = "k"; }
  // 'g' with 4 digits: 100, 1.5, 1.025; no exponent in this range (below 1000 of a unit).
  QString text = QString::number(scaled, 'g', 4);
  if (text.contains(QLatin1Char('e'))) text = QString::number(std::round(scaled));
  return text == QLatin1String("-0") ? QStringLiteral("0") : text + QLatin1String(suffix);
}

namespace {

constexpr const char* kOneLineTitle = "depthlabOneLineTitle";
constexpr const char* kTwoLineTitle = "depthlabTwoLineTitle";

// The title of setAxisTitleToFit that fits `axis` at its current length (lays the plot out).
void pickAxisTitle(QCPAxis* axis) {
  const QString one = axis->property(kOneLineTitle).toString();
  const QString two = axis->property(kTwoLineTitle).toString();
  if (one.isEmpty()) return;
  layOut(axis->parentPlot());
  const double length = axis->orientation() == Qt::Horizontal ? axis->axisRect()->width()
                                                              : axis->axisRect()->height();
  const bool fits =
      QFontMetricsF(axis->labelFont(), axis->parentPlot()).horizontalAdvance(one) <= length;
  axis->setLabel(fits ? one : two);
}

}  // namespace

void setAxisTitleToFit(QCPAxis* axis, const QString& oneLine, const QString& twoLines) {
  const bool connected = axis->property(kOneLineTitle).isValid();
  axis->setProperty(kOneLineTitle, oneLine);
  axis->setProperty(kTwoLineTitle, twoLines);
  pickAxisTitle(axis);
  if (!connected) {
    QPointer<QCPAxis> weak(axis);
    QObject::connect(axis->parentPlot(), &QCustomPlot::beforeReplot, axis, [weak] {
      if (weak) pickAxisTitle(weak);
    });
  }
}

}  // namespace depthlab::ui::figures

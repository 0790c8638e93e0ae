// See colormaps.h.
#include "plot/colormaps.h"

#include <qcustomplot.h>

#include "experiment/experiment_config.h"
#include "export/figure_style.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace depthlab::ui {

namespace {

// sRGB -> CIELAB (D65): L*, a*, b*.
std::array<double, 3> toLab(const QColor& c) {
  auto linear = [](double u) { return u <= 0.04045 ? u / 12.92 : std::pow((u + 0.055) / 1.055, 2.4); };
  const double r = linear(c.redF()), g = linear(c.greenF()), b = linear(c.blueF());
  const double x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
  const double y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  const double z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
  auto f = [](double t) { return t > 0.008856 ? std::cbrt(t) : 7.787 * t + 16.0 / 116.0; };
  return {116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))};
}

}  // namespace

double colourDistance(const QColor& a, const QColor& b) {
  const auto p = toLab(a), q = toLab(b);
  return std::sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) + (p[2] - q[2]) * (p[2] - q[2]));
}

QColor schemeColor(const QString& scheme, const QString& palette) {
  auto colors = paletteColors(palette);
  const auto& known = experiment::kSchemes;
  auto it = std::find(known.begin(), known.end(), scheme.toStdString());
  if (it == known.end()) return QColor(120, 120, 120);
  // More schemes than the palette has colours: hues of Paul Tol's schemes (indigo, wine, olive,
  // magenta, brown) come first,
  // each that stands apart from every colour taken (a darker shade of a palette colour is too
  // near it to tell schemes apart: DyT + LNS beside Pre-LN; and runs of one scheme take shades
  // of its colour). Past those, the colours again, one step darker a round.
  for (const QColor& extra : {QColor(0x33, 0x22, 0x88), QColor(0x88, 0x22, 0x55), QColor(0x99, 0x99, 0x33),
                              QColor(0xEE, 0x33, 0x77), QColor(0x88, 0x44, 0x00)}) {
    const bool apart = std::all_of(colors.begin(), colors.end(),
                                   [&](const QColor& c) { return colourDistance(c, extra) > kDistinctColours; });
    if (apart) colors.push_back(extra);
  }
  const auto i = static_cast<size_t>(it - known.begin());
  const auto round = static_cast<int>(i / colors.size());
  const QColor c = colors[i % colors.size()];
  return round == 0 ? c : c.darker(100 + 45 * round);
}

QColor layerColor(int layer, int layers) {
  static const QColor viridis[] = {QColor(68, 1, 84),    QColor(72, 40, 120), QColor(62, 74, 137),
                                   QColor(49, 104, 142), QColor(38, 130, 142), QColor(31, 158, 137),
                                   QColor(53, 183, 121), QColor(110, 206, 88), QColor(181, 222, 43),
                                   QColor(253, 231, 37)};
  const double t = layers > 1 ? static_cast<double>(layer) / (layers - 1) : 0.0;
  const double x = t * 9.0;
  const int i = std::clamp(static_cast<int>(std::floor(x)), 0, 8);
  const double f = x - i;
  const QColor a = viridis[i], b = viridis[i + 1];
  return QColor::fromRgbF(static_cast<float>(a.redF() + f * (b.redF() - a.redF())),
                          static_cast<float>(a.greenF() + f * (b.greenF() - a.greenF())),
                          static_cast<float>(a.blueF() + f * (b.blueF() - a.blueF())));
}

QCPColorGradient viridisGradient(bool reversed) {
  QCPColorGradient g;
  QMap<double, QColor> stops;
  for (int i = 0; i <= 10; ++i) {
    const double t = i / 10.0;
    stops[reversed ? 1.0 - t : t] = layerColor(i, 11);
  }
  g.setColorStops(stops);
  g.setNanHandling(QCPColorGradient::nhTransparent);
  return g;
}

QCPColorGradient divergingGradient() {
  // ColorBrewer RdBu (11 classes), blue for negative values.
  static const QColor stops[] = {QColor(5, 48, 97),    QColor(33, 102, 172), QColor(67, 147, 195),
                                 QColor(146, 197, 222), QColor(209, 229, 240), QColor(255, 255, 255),
                                 QColor(253, 219, 199), QColor(244, 165, 130), QColor(214, 96, 77),
                                 QColor(178, 24, 43),  QColor(103, 0, 31)};
  QCPColorGradient g;
  QMap<double, QColor> map;
  for (int i = 0; i <= 10; ++i) map[i / 10.0] = stops[i];
  g.setColorStops(map);
  g.setNanHandling(QCPColorGradient::nhTransparent);
  return g;
}

}  // namespace depthlab::ui

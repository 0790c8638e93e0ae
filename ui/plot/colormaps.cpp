// See colormaps.h.
#include "plot/colormaps.h"

#include <qcustomplot.h>

#include "experiment/experiment_config.h"
#include "export/figure_style.h"

#include <algorithm>
#include <cmath>

namespace depthlab::ui {

QColor schemeColor(const QString& scheme, const QString& palette) {
  const auto colors = paletteColors(palette);
  const auto& known = experiment::kSchemes;
  auto it = std::find(known.begin(), known.end(), scheme.toStdString());
  if (it == known.end()) return QColor(120, 120, 120);
  // More schemes than the palette has colours: the next ones take its colours darker, one
  // step darker a round, so every scheme keeps a colour of its own.
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

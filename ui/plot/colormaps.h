// Colour choices shared by every plot: a fixed colour per scheme (Okabe-Ito, colour-blind
// safe) and a sequential colour per layer (viridis samples), so panels agree.
#pragma once

#include <QColor>
#include <QString>

class QCPColorGradient;

namespace depthlab::ui {

/// The colour of a scheme everywhere (dashboard, comparison, exported figures): the
/// palette's colour at the scheme's position in experiment::kSchemes.
QColor schemeColor(const QString& scheme, const QString& palette = QStringLiteral("okabe-ito"));
/// How far apart two colours look: CIE76 delta E in CIELAB (2.3: just noticeable). Schemes'
/// colours are kDistinctColours apart (the Okabe-Ito palette's nearest pair, blue and sky blue,
/// is 26; a darker shade of one colour, as DyT + LNS had of Pre-LN's blue, 18).
double colourDistance(const QColor& a, const QColor& b);
inline constexpr double kDistinctColours = 25;
/// Layer l of L on a sequential (viridis) scale.
QColor layerColor(int layer, int layers);
/// Viridis for heatmaps (QCustomPlot has no preset for it); `reversed`: yellow = small,
/// as in the paper's angular-distance figures.
QCPColorGradient viridisGradient(bool reversed = false);
/// Blue (negative) through white (0) to red (positive): differences and signed deltas, on a
/// range symmetric about 0 so that white is exactly 0.
QCPColorGradient divergingGradient();

}  // namespace depthlab::ui

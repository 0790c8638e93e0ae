// FigureStyle: how an exported figure looks on paper: physical size (cm, in or pt), DPI for
// PNG, font family and size, line width, a colour-blind-safe palette, and the clean paper
// look (white background, no UI chrome). Styles round-trip through JSON so they can be saved
// and reused; the names of schemes and runs are also kept in the run database, so that the
// window, `depthlab-cli export` and Compare's LaTeX table call them the same.
#pragma once

#include <QColor>
#include <QMap>
#include <QString>

#include <cstdint>
#include <vector>

namespace depthlab::store {
class RunStore;
}

namespace depthlab::ui {

struct FigureStyle {
  double widthPt = 241;        // 8.5 cm, one column
  double heightPt = 0;         // 0 = width * 0.68 (per panel row)
  double dpi = 300;            // PNG only
  QString fontFamily = QStringLiteral("Latin Modern Roman");
  double fontPt = 8;
  double lineWidth = 1.0;      // pt
  QString palette = QStringLiteral("okabe-ito");  // okabe-ito | tol-bright
  /// The loss figure's train curves: EMA weight 0..0.99 as the dashboard's smoothing slider
  /// (0: raw), written in the figure's key.
  double smoothing = 0;
  /// What a scheme is called in figures ("pre_ln" -> "Pre-LN"); schemes not listed use
  /// defaultSchemeName().
  QMap<QString, QString> schemeNames;
  /// What a run is called in figures, by run id; beats the run's own (renamed) name.
  QMap<qint64, QString> runNames;
};

/// "Pre-LN", "LNS", "Post-LN", ...: the paper's spelling of a scheme id.
QString defaultSchemeName(const QString& scheme);
/// The style's name for `scheme`, else the default spelling.
QString schemeDisplayName(const FigureStyle& style, const QString& scheme);

/// Adds the names kept in the database (RunStore::displayNames) for what the style does not
/// name itself: a name given by --label, a saved style or the window wins.
void addStoredNames(FigureStyle& style, store::RunStore& store);
/// Keeps the style's names of `schemes` and `runs` in the database; one the style no longer
/// names (back to its default) loses its stored name.
void storeNames(const FigureStyle& style, store::RunStore& store,
                const std::vector<QString>& schemes, const std::vector<qint64>& runs);

/// "8.5cm", "3.35in", "241pt", "241" (pt) -> points; throws std::invalid_argument.
double parseLengthToPoints(const QString& text);
QString styleToJson(const FigureStyle& s);
FigureStyle styleFromJson(const QString& json);  // throws std::invalid_argument
/// The palette's colours in order (colour-blind safe).
std::vector<QColor> paletteColors(const QString& palette);

}  // namespace depthlab::ui

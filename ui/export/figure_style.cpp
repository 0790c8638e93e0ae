// See figure_style.h.
#include "export/figure_style.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

#include <stdexcept>
#include <string>

#include "model/scheme_catalogue.h"
#include "store/run_store.h"

namespace depthlab::ui {

double parseLengthToPoints(const QString& text) {
  static const QRegularExpression re(
      QStringLiteral("^\\s*([0-9]*\\.?[0-9]+)\\s*(cm|mm|in|pt)?\\s*$"));
  auto m = re.match(text);
  if (!m.hasMatch())
    throw std::invalid_argument("size '" + text.toStdString() +
                                "': use e.g. 8.5cm, 3.3in or 241pt");
  const double v = m.captured(1).toDouble();
  const QString unit = m.captured(2);
  if (unit == QLatin1String("cm")) return v / 2.54 * 72.0;
  if (unit == QLatin1String("mm")) return v / 25.4 * 72.0;
  if (unit == QLatin1String("in")) return v * 72.0;
  return v;
}

QString defaultSchemeName(const QString& scheme) {
  return QString::fromStdString(model::schemeDisplayName(scheme.toStdString()));
}

QString schemeDisplayName(const FigureStyle& style, const QString& scheme) {
  const QString named = style.schemeNames.value(scheme);
  return named.isEmpty() ? defaultSchemeName(scheme) : named;
}

void addStoredNames(FigureStyle& style, store::RunStore& store) {
  for (const auto& [key, name] : store.displayNames()) {
    const QString k = QString::fromStdString(key), n = QString::fromStdString(name);
    if (k.startsWith(QLatin1String("scheme:"))) {
      const QString scheme = k.mid(7);
      if (!style.schemeNames.contains(scheme)) style.schemeNames[scheme] = n;
    } else if (k.startsWith(QLatin1String("run:"))) {
      bool ok = false;
      const qint64 id = k.mid(4).toLongLong(&ok);
      if (ok && !style.runNames.contains(id)) style.runNames[id] = n;
    }
  }
}

void storeNames(const FigureStyle& style, store::RunStore& store,
                const std::vector<QString>& schemes, const std::vector<qint64>& runs) {
  const auto stored = store.displayNames();
  auto keep = [&](const std::string& key, const QString& name) {
    const auto it = stored.find(key);
    const std::string now = it == stored.end() ? std::string() : it->second;
    if (now != name.toStdString()) store.setDisplayName(key, name.toStdString());
  };
  for (const auto& s : schemes) keep("scheme:" + s.toStdString(), style.schemeNames.value(s));
  for (qint64 id : runs) keep("run:" + std::to_string(id), style.runNames.value(id));
}

QString styleToJson(const FigureStyle& s) {
  QJsonObject schemes, runs;
  for (auto it = s.schemeNames.begin(); it != s.schemeNames.end(); ++it)
    schemes[it.key()] = it.value();
  for (auto it = s.runNames.begin(); it != s.runNames.end(); ++it)
    runs[QString::number(it.key())] = it.value();
  QJsonObject o{
      {QStringLiteral("schemeNames"), schemes}, {QStringLiteral("runNames"), runs},
      {QStringLiteral("widthPt"), s.widthPt},   {QStringLiteral("heightPt"), s.heightPt},
      {QStringLiteral("dpi"), s.dpi},           {QStringLiteral("fontFamily"), s.fontFamily},
      {QStringLiteral("fontPt"), s.fontPt},     {QStringLiteral("lineWidth"), s.lineWidth},
      {QStringLiteral("palette"), s.palette},   {QStringLiteral("smoothing"), s.smoothing}};
  return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Indented));
}

FigureStyle styleFromJson(const QString& json) {
  auto doc = QJsonDocument::fromJson(json.toUtf8());
  if (!doc.isObject()) throw std::invalid_argument("figure style is not a JSON object");
  auto o = doc.object();
  FigureStyle s;
  s.widthPt = o.value(QStringLiteral("widthPt")).toDouble(s.widthPt);
  s.heightPt = o.value(QStringLiteral("heightPt")).toDouble(s.heightPt);
  s.dpi = o.value(QStringLiteral("dpi")).toDouble(s.dpi);
  s.fontFamily = o.value(QStringLiteral("fontFamily")).toString(s.fontFamily);
  s.fontPt = o.value(QStringLiteral("fontPt")).toDouble(s.fontPt);
  s.lineWidth = o.value(QStringLiteral("lineWidth")).toDouble(s.lineWidth);
  s.palette = o.value(QStringLiteral("palette")).toString(s.palette);
  s.smoothing = o.value(QStringLiteral("smoothing")).toDouble(s.smoothing);
  const auto schemes = o.value(QStringLiteral("schemeNames")).toObject();
  for (auto it = schemes.begin(); it != schemes.end(); ++it) {
    if (!it.value().isString())
      throw std::invalid_argument("schemeNames: the name of " + it.key().toStdString() +
                                  " is not a string");
    s.schemeNames[it.key()] = it.value().toString();
  }
  const auto runs = o.value(QStringLiteral("runNames")).toObject();
  for (auto it = runs.begin(); it != runs.end(); ++it) {
    bool ok = false;
    const qint64 id = it.key().toLongLong(&ok);
    if (!ok || !it.value().isString())
      throw std::invalid_argument("runNames: use {\"<run id>\": \"name\"} (got key '" +
                                  it.key().toStdString() + "')");
    s.runNames[id] = it.value().toString();
  }
  if (!(s.widthPt > 10) || !(s.dpi >= 36) || !(s.fontPt > 2) ||
      !(s.smoothing >= 0 && s.smoothing < 1))
    throw std::invalid_argument("figure style out of range");
  return s;
}

std::vector<QColor> paletteColors(const QString& palette) {
  if (palette == QLatin1String("tol-bright")) {
    return {QColor(0x44, 0x77, 0xAA), QColor(0xEE, 0x66, 0x77), QColor(0x22, 0x88, 0x33),
            QColor(0xCC, 0xBB, 0x44), QColor(0x66, 0xCC, 0xEE), QColor(0xAA, 0x33, 0x77),
            QColor(0xBB, 0xBB, 0xBB)};
  }
  return {QColor(0, 114, 178), QColor(213, 94, 0),   QColor(0, 158, 115),  QColor(204, 121, 167),
          QColor(230, 159, 0), QColor(86, 180, 233), QColor(240, 228, 66), QColor(0, 0, 0)};
}

}  // namespace depthlab::ui

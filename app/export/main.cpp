// depthlab-export: headless figure export (`depthlab-cli export` runs it; the CLI itself has
// no Qt). Uses Qt's offscreen platform when there is no display.
//   depthlab-export --runs 3,4 --figure variance|angular|pruning|loss|set
//                   --format pdf|svg|png --width 8.5cm [--height 6cm] [--dpi 300]
//                   [--font "Latin Modern Roman"] [--font-size 8] [--line-width 1]
//                   [--palette okabe-ito|tol-bright] [--style style.json] [--save-style FILE]
//                   --out PATH [--db PATH]
#include <QApplication>
#include <QCommandLineParser>
#include <QFile>

#include <cstdio>
#include <cstdlib>

#include "export/figure_export.h"
#include "util/paths.h"

using namespace depthlab;

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY") &&
      qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY")) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
  }
  // Our options are parsed from the full argument list; QApplication sees only the program
  // name, so Qt's own -style / -platform options cannot swallow ours (--style is a figure style).
  QStringList arguments;
  for (int i = 0; i < argc; ++i) arguments << QString::fromLocal8Bit(argv[i]);
  int qtArgc = 1;
  QApplication app(qtArgc, argv);
  QCommandLineParser p;
  p.addHelpOption();
  auto opt = [&](const char* name, const char* help, const char* value, const char* def = nullptr) {
    QCommandLineOption o(QString::fromLatin1(name), QString::fromLatin1(help), QString::fromLatin1(value));
    if (def) o.setDefaultValue(QString::fromLatin1(def));
    p.addOption(o);
    return o;
  };
  auto runs = opt("runs", "Comma-separated run ids", "ids");
  auto figure = opt("figure", "loss | variance | angular | pruning | set", "kind", "variance");
  auto format = opt("format", "pdf | svg | png", "format", "pdf");
  auto width = opt("width", "Figure width (cm, in, pt)", "size", "8.5cm");
  auto height = opt("height", "Figure height (default: 0.68 x width)", "size");
  auto dpi = opt("dpi", "PNG resolution", "dpi", "300");
  auto font = opt("font", "Font family", "family", "Latin Modern Roman");
  auto fontSize = opt("font-size", "Font size in pt", "pt", "8");
  auto lineWidth = opt("line-width", "Line width in pt", "pt", "1");
  auto palette = opt("palette", "okabe-ito | tol-bright", "name", "okabe-ito");
  auto styleFile = opt("style", "Saved style (JSON) to start from", "file");
  auto saveStyle = opt("save-style", "Also save the style used to this file", "file");
  auto out = opt("out", "Output file (a folder for --figure set)", "path");
  auto db = opt("db", "Run database", "path");
  p.process(arguments);
  try {
    if (!p.isSet(runs) || !p.isSet(out)) throw std::invalid_argument("--runs and --out are required");
    ui::FigureStyle style;
    if (p.isSet(styleFile)) {
      QFile f(p.value(styleFile));
      if (!f.open(QIODevice::ReadOnly)) throw std::invalid_argument("cannot read style " + p.value(styleFile).toStdString());
      style = ui::styleFromJson(QString::fromUtf8(f.readAll()));
    }
    if (!p.isSet(styleFile) || p.isSet(width)) style.widthPt = ui::parseLengthToPoints(p.value(width));
    if (p.isSet(height)) style.heightPt = ui::parseLengthToPoints(p.value(height));
    if (!p.isSet(styleFile) || p.isSet(dpi)) style.dpi = p.value(dpi).toDouble();
    // Sizes a page can hold: 0.5 cm to 1 m wide, 36 to 2400 dpi.
    if (!(style.widthPt >= 14 && style.widthPt <= 2835)) {
      throw std::invalid_argument("--width '" + p.value(width).toStdString() +
                                  "' must be a length from 0.5cm to 100cm (e.g. 8.5cm, 3.3in, 240pt)");
    }
    if (p.isSet(height) && !(style.heightPt >= 14 && style.heightPt <= 2835)) {
      throw std::invalid_argument("--height '" + p.value(height).toStdString() +
                                  "' must be a length from 0.5cm to 100cm");
    }
    if (!(style.dpi >= 36 && style.dpi <= 2400)) {
      throw std::invalid_argument("--dpi '" + p.value(dpi).toStdString() + "' must be from 36 to 2400");
    }
    if (!p.isSet(styleFile) || p.isSet(font)) style.fontFamily = p.value(font);
    if (!p.isSet(styleFile) || p.isSet(fontSize)) style.fontPt = p.value(fontSize).toDouble();
    if (!p.isSet(styleFile) || p.isSet(lineWidth)) style.lineWidth = p.value(lineWidth).toDouble();
    if (!p.isSet(styleFile) || p.isSet(palette)) style.palette = p.value(palette);
    if (p.isSet(saveStyle)) {
      QFile f(p.value(saveStyle));
      if (f.open(QIODevice::WriteOnly)) f.write(ui::styleToJson(style).toUtf8());
    }
    std::vector<int64_t> ids;
    for (const auto& s : p.value(runs).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
      bool ok = false;
      ids.push_back(s.trimmed().toLongLong(&ok));
      if (!ok || ids.back() <= 0) throw std::invalid_argument("--runs: '" + s.toStdString() + "' is not a run id");
    }
    if (ids.empty()) throw std::invalid_argument("--runs: no run ids given (e.g. --runs 3,4)");
    auto store = store::RunStore::open(util::defaultDatabasePath(p.value(db).toStdString()),
                                       store::RunStore::Mode::ReadOnly);
    ui::ExportResult r;
    if (p.value(figure) == QLatin1String("set")) {
      r = ui::exportFigureSet(store, ids, p.value(format), p.value(out), style);
    } else {
      ui::ExportRequest req;
      req.runs = ids;
      req.kind = ui::figureKindFromName(p.value(figure));
      req.format = p.value(format);
      req.path = p.value(out);
      req.style = style;
      r = ui::exportFigure(store, req);
    }
    for (const auto& f : r.files) std::printf("wrote %s\n", f.toLocal8Bit().constData());
    for (const auto& w : r.warnings) std::fprintf(stderr, "warning: %s\n", w.toLocal8Bit().constData());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "depthlab export: %s\n", e.what());
    return 1;
  }
}

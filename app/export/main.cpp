// depthlab-export: headless figure export (`depthlab-cli export` runs it; the CLI itself has
// no Qt). Uses Qt's offscreen platform when there is no display. Schemes and runs go by the
// names the figure window kept in the database unless --label or --style names them.
//   depthlab-export --runs 3,4 --figure ID|set|study   (IDs: figure_catalogue.h; --help lists them)
//                   --format pdf|svg|png --width 8.5cm [--height 6cm] [--dpi 300]
//                   [--font "Latin Modern Roman"] [--font-size 8] [--line-width 1]
//                   [--palette okabe-ito|tol-bright] [--style style.json] [--save-style FILE]
//                   [--label pre_ln=Pre-LN --label "lns=LNS (ours)" --label 7=baseline]
//                   [--smoothing 0.6]
//                   --out PATH [--db PATH]
#include <QApplication>
#include <QCommandLineParser>
#include <QFile>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "experiment/run_selection.h"
#include "export/figure_catalogue.h"
#include "export/figure_export.h"
#include "export/study_figures.h"
#include "qt_environment.h"
#include "util/paths.h"

using namespace depthlab;

namespace {

// The command line's options (see the header comment).
struct Options {
  QCommandLineOption runs, figure, format, width, height, dpi, font, fontSize, lineWidth, palette,
      styleFile, saveStyle, out, db, label, smoothing;
};

QCommandLineOption option(const char* name, const char* help, const char* value,
                          const char* def = nullptr) {
  QCommandLineOption o(QString::fromLatin1(name), QString::fromLatin1(help),
                       QString::fromLatin1(value));
  if (def) o.setDefaultValue(QString::fromLatin1(def));
  return o;
}

Options addOptions(QCommandLineParser& p) {
  Options o{
      option("runs", "Runs: ids 3,4,7, a range 5-8, all, or group:NAME (mixed, comma-separated)",
             "runs"),
      option("figure",
             "A figure of the list below, set (the figure set: --out is a folder) or "
             "study (the depth study's figures of every scheme: --out is a folder)",
             "id", "variance"),
      option("format", "pdf | svg | png", "format", "pdf"),
      option("width", "Figure width (cm, in, pt)", "size", "8.5cm"),
      option("height", "Figure height (default: 0.68 x width)", "size"),
      option("dpi", "PNG resolution", "dpi", "300"),
      option("font", "Font family", "family", "Latin Modern Roman"),
      option("font-size", "Font size in pt", "pt", "8"),
      option("line-width", "Line width in pt", "pt", "1"),
      option("palette", "okabe-ito | tol-bright", "name", "okabe-ito"),
      option("style", "Saved style (JSON) to start from", "file"),
      option("save-style", "Also save the style used to this file", "file"),
      option("out", "Output file (a folder for --figure set)", "path"),
      option("db", "Run database", "path"),
      option("label",
             "A display name, repeatable: SCHEME=NAME (pre_ln=Pre-LN, lns='LNS (ours)') "
             "or RUNID=NAME (7=baseline); kept by --save-style",
             "key=name"),
      option("smoothing",
             "Loss figure: EMA weight of the train curves, 0 (raw) to 0.99, "
             "as the dashboard's smoothing",
             "weight", "0")};
  for (const auto* opt : {&o.runs, &o.figure, &o.format, &o.width, &o.height, &o.dpi, &o.font,
                          &o.fontSize, &o.lineWidth, &o.palette, &o.styleFile, &o.saveStyle, &o.out,
                          &o.db, &o.label, &o.smoothing}) {
    p.addOption(*opt);
  }
  return o;
}

// The figure style: a saved style when given, the options over it; sizes a page can hold.
ui::FigureStyle styleFrom(const QCommandLineParser& p, const Options& o) {
  ui::FigureStyle style;
  if (p.isSet(o.styleFile)) {
    QFile f(p.value(o.styleFile));
    if (!f.open(QIODevice::ReadOnly))
      throw std::invalid_argument("cannot read style " + p.value(o.styleFile).toStdString());
    style = ui::styleFromJson(QString::fromUtf8(f.readAll()));
  }
  const bool fresh = !p.isSet(o.styleFile);  // no saved style: every option's value counts
  if (fresh || p.isSet(o.width)) style.widthPt = ui::parseLengthToPoints(p.value(o.width));
  if (p.isSet(o.height)) style.heightPt = ui::parseLengthToPoints(p.value(o.height));
  if (fresh || p.isSet(o.dpi)) style.dpi = p.value(o.dpi).toDouble();
  // Sizes a page can hold: 0.5 cm to 1 m wide, 36 to 2400 dpi.
  if (!(style.widthPt >= 14 && style.widthPt <= 2835)) {
    throw std::invalid_argument(
        "--width '" + p.value(o.width).toStdString() +
        "' must be a length from 0.5cm to 100cm (e.g. 8.5cm, 3.3in, 240pt)");
  }
  if (p.isSet(o.height) && !(style.heightPt >= 14 && style.heightPt <= 2835)) {
    throw std::invalid_argument("--height '" + p.value(o.height).toStdString() +
                                "' must be a length from 0.5cm to 100cm");
  }
  if (!(style.dpi >= 36 && style.dpi <= 2400)) {
    throw std::invalid_argument("--dpi '" + p.value(o.dpi).toStdString() +
                                "' must be from 36 to 2400");
  }
  if (fresh || p.isSet(o.font)) style.fontFamily = p.value(o.font);
  if (fresh || p.isSet(o.fontSize)) style.fontPt = p.value(o.fontSize).toDouble();
  if (fresh || p.isSet(o.lineWidth)) style.lineWidth = p.value(o.lineWidth).toDouble();
  if (fresh || p.isSet(o.palette)) style.palette = p.value(o.palette);
  if (fresh || p.isSet(o.smoothing)) style.smoothing = p.value(o.smoothing).toDouble();
  if (!(style.smoothing >= 0 && style.smoothing <= 0.99)) {
    throw std::invalid_argument("--smoothing '" + p.value(o.smoothing).toStdString() +
                                "' must be from 0 to 0.99");
  }
  for (const auto& l : p.values(o.label)) {
    const int eq = l.indexOf(QLatin1Char('='));
    if (eq <= 0)
      throw std::invalid_argument("--label '" + l.toStdString() +
                                  "': use SCHEME=NAME or RUNID=NAME");
    const QString key = l.left(eq).trimmed(), name = l.mid(eq + 1).trimmed();
    bool numeric = false;
    const qint64 id = key.toLongLong(&numeric);
    if (numeric)
      style.runNames[id] = name;
    else
      style.schemeNames[key] = name;
  }
  return style;
}

}  // namespace

int main(int argc, char** argv) {
  ui::prepareQtEnvironment(/*headless=*/true);  // offscreen without a display; no XDG warning
  // Our options are parsed from the full argument list; QApplication sees only the program
  // name, so Qt's own -style / -platform options cannot swallow ours (--style is a figure style).
  QStringList arguments;
  for (int i = 0; i < argc; ++i) arguments << QString::fromLocal8Bit(argv[i]);
  int qtArgc = 1;
  QApplication app(qtArgc, argv);
  QCommandLineParser p;
  p.addHelpOption();
  p.setApplicationDescription(
      QStringLiteral("Paper figures from stored runs. The figures (--figure):\n") +
      ui::figureHelp());
  const Options o = addOptions(p);
  p.process(arguments);
  try {
    if (!p.isSet(o.runs) || !p.isSet(o.out))
      throw std::invalid_argument("--runs and --out are required");
    const QString figure = p.value(o.figure);
    if (figure != QLatin1String("study") && figure != QLatin1String("set"))
      ui::requireFigure(figure);
    ui::FigureStyle style = styleFrom(p, o);
    auto store = store::RunStore::open(util::defaultDatabasePath(p.value(o.db).toStdString()),
                                       store::RunStore::Mode::ReadOnly);
    ui::addStoredNames(style, store);  // names set in the window, under --label / --style
    if (p.isSet(o.saveStyle)) {
      QFile f(p.value(o.saveStyle));
      if (f.open(QIODevice::WriteOnly)) f.write(ui::styleToJson(style).toUtf8());
    }
    const auto ids = experiment::resolveRunSelection(p.value(o.runs).toStdString(), store);
    ui::ExportResult r;
    if (p.value(o.figure) == QLatin1String("study")) {
      r = ui::exportStudyFigures(store, ids, p.value(o.format), p.value(o.out), style);
    } else if (p.value(o.figure) == QLatin1String("set")) {
      r = ui::exportFigureSet(store, ids, p.value(o.format), p.value(o.out), style);
    } else {
      ui::ExportRequest req;
      req.runs = ids;
      req.figure = figure;
      req.format = p.value(o.format);
      req.path = p.value(o.out);
      req.style = style;
      r = ui::exportFigure(store, req);
    }
    for (const auto& f : r.files) std::printf("wrote %s\n", f.toLocal8Bit().constData());
    for (const auto& w : r.warnings)
      std::fprintf(stderr, "warning: %s\n", w.toLocal8Bit().constData());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "depthlab export: %s\n", e.what());
    return 1;
  }
}

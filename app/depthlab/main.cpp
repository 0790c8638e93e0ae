// depthlab: the lab window. Opens the run store (--db, $DEPTHLAB_DB or the data folder),
// prepares the default corpus, and shows the MainWindow. A table of contents, no logic.
#include <QApplication>
#include <QCommandLineParser>
#include <QMessageBox>
#include <QElapsedTimer>
#include <QPointer>
#include <QTimer>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include <memory>

#include "data/default_corpus.h"
#include "compare/compare_view.h"
#include "dashboard/group_dashboard.h"
#include "export/figure_dialog.h"
#include "main_window.h"
#include "plot/plot_theme.h"
#include "util/openblas_kernels.h"
#include "util/paths.h"
#include "qt_environment.h"

namespace {

// Saves a picture of `shotOf` and quits once the views have read their runs on the loader
// thread (30 s at most), 1.5 s after start at the earliest.
void screenshotWhenRead(QWidget* window, QWidget* shotOf, const QString& path,
                        QPointer<depthlab::ui::GroupDashboard> dashboard,
                        QPointer<depthlab::ui::CompareView> comparison,
                        QPointer<depthlab::ui::FigureDialog> dialog) {
  auto* wait = new QTimer(window);
  auto started = std::make_shared<QElapsedTimer>();
  started->start();
  QObject::connect(wait, &QTimer::timeout, window, [=] {
    const bool reading = (dashboard && (!dashboard->isLoaded() || dashboard->loading())) ||
                         (comparison && !comparison->isLoaded()) || (dialog && dialog->isReading());
    if (reading && started->elapsed() < 30000) return;
    wait->stop();
    const bool ok = shotOf->grab().save(path);
    std::fprintf(stderr, "depthlab: screenshot %s\n", ok ? "saved" : "FAILED");
    QApplication::exit(ok ? 0 : 1);
  });
  QTimer::singleShot(1500, wait, [wait] { wait->start(200); });
}

// What the command line asks the window to open and save.
struct LaunchOptions {
  QString db, group, screenshot, size;
  std::vector<int64_t> compare, figureDialog;  // run ids
};

std::vector<int64_t> runIds(const QString& commaSeparated) {
  std::vector<int64_t> ids;
  for (const auto& id : commaSeparated.split(QLatin1Char(','), Qt::SkipEmptyParts)) ids.push_back(id.toLongLong());
  return ids;
}

LaunchOptions parseOptions(const QApplication& app) {
  QCommandLineParser cli;
  cli.addHelpOption();
  cli.addVersionOption();
  const QCommandLineOption db(QStringLiteral("db"), QStringLiteral("Run database."), QStringLiteral("path"));
  const QCommandLineOption group(QStringLiteral("group"), QStringLiteral("Open the dashboard of a run group."),
                                 QStringLiteral("name"));
  const QCommandLineOption shot(QStringLiteral("screenshot"),
                                QStringLiteral("Save the window as PNG after loading, then quit."),
                                QStringLiteral("file"));
  const QCommandLineOption compare(QStringLiteral("compare"),
                                   QStringLiteral("Open a comparison of runs (ids, comma-separated)."),
                                   QStringLiteral("ids"));
  const QCommandLineOption size(QStringLiteral("size"), QStringLiteral("Window size, e.g. 1500x2400 (screenshots)."),
                                QStringLiteral("WxH"));
  const QCommandLineOption figure(QStringLiteral("figure-dialog"),
                                  QStringLiteral("Open the paper-figure dialog for runs (ids, comma-separated)."),
                                  QStringLiteral("ids"));
  for (const auto* o : {&db, &compare, &group, &shot, &size, &figure}) cli.addOption(*o);
  cli.process(app);
  return {cli.value(db), cli.value(group), cli.value(shot), cli.value(size), runIds(cli.value(compare)),
          runIds(cli.value(figure))};
}

// Opens the dialog, dashboard and comparison asked for, and takes the screenshot once they
// have read their runs.
void openRequestedViews(depthlab::ui::MainWindow& window, const LaunchOptions& opts) {
  QWidget* shotOf = &window;
  QPointer<depthlab::ui::FigureDialog> dialog;
  if (!opts.figureDialog.empty()) {
    dialog = window.openFigureDialog(opts.figureDialog, QStringLiteral("variance"));
    if (dialog) shotOf = dialog;
  }
  QPointer<depthlab::ui::GroupDashboard> dashboard;
  if (!opts.group.isEmpty()) {
    dashboard = window.dashboard(opts.group);
    window.showTab(dashboard);
  }
  QPointer<depthlab::ui::CompareView> comparison;
  if (!opts.compare.empty()) {
    comparison = window.compareRuns(opts.compare);
    window.showTab(comparison);
  }
  if (!opts.screenshot.isEmpty()) screenshotWhenRead(&window, shotOf, opts.screenshot, dashboard, comparison, dialog);
}

}  // namespace

int main(int argc, char** argv) {
  depthlab::util::ensureOpenBlasKernels(argv);  // may start this program again (see its header)
  // A screenshot needs no display: it is drawn offscreen by itself (it had refused).
  bool screenshot = false;
  for (int i = 1; i < argc; ++i) screenshot = screenshot || std::string(argv[i]).rfind("--screenshot", 0) == 0;
  const bool offscreen = depthlab::ui::prepareQtEnvironment(screenshot);
  if (!depthlab::ui::haveDisplay()) {
    std::fprintf(stderr,
                 "depthlab: no display found (DISPLAY/WAYLAND_DISPLAY unset).\n"
                 "Use the headless CLI instead, e.g. `build/release/app/depthlab-cli --help`,\n"
                 "or run under Xvfb: `xvfb-run build/release/app/depthlab`.\n");
    return 2;
  }
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("DepthLab"));
  QApplication::setApplicationVersion(QStringLiteral(DEPTHLAB_VERSION));
  // The system's palette, or a dark one where the desktop does not pass its theme to Qt.
  if (qEnvironmentVariable("DEPTHLAB_PALETTE") == QLatin1String("dark")) {
    QApplication::setStyle(QStringLiteral("Fusion"));
    QApplication::setPalette(depthlab::ui::darkFusionPalette());
  }

  const LaunchOptions opts = parseOptions(app);
  const std::string dbPath = depthlab::util::defaultDatabasePath(opts.db.toStdString());
  auto corpus = depthlab::data::ensureDefaultCorpus();
  try {
    depthlab::util::ensureDir(depthlab::util::parentDir(dbPath));
    auto store = depthlab::store::RunStore::open(dbPath);
    depthlab::ui::MainWindow window(std::move(store),
                                    {QString::fromStdString(corpus.path),
                                     QString::fromStdString(corpus.message), QString(), QString()});
    window.show();
    const auto wh = opts.size.split(QLatin1Char('x'));
    if (wh.size() == 2) window.resize(wh[0].toInt(), wh[1].toInt());
    openRequestedViews(window, opts);
    return QApplication::exec();
  } catch (const std::exception& e) {
    // Offscreen (a screenshot, a test) nobody could close a dialog: the message goes to stderr.
    std::fprintf(stderr, "depthlab: %s\n", e.what());
    if (!offscreen && qEnvironmentVariable("QT_QPA_PLATFORM") != QLatin1String("offscreen")) {
      QMessageBox::critical(nullptr, QStringLiteral("DepthLab"), QString::fromStdString(e.what()));
    }
    return 1;
  }
}

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
#include <memory>

#include "data/default_corpus.h"
#include "compare/compare_view.h"
#include "dashboard/group_dashboard.h"
#include "export/figure_dialog.h"
#include "main_window.h"
#include "plot/plot_theme.h"
#include "util/openblas_kernels.h"
#include "util/paths.h"

static bool haveDisplay() {
  const char* platform = std::getenv("QT_QPA_PLATFORM");
  if (platform && *platform) return true;  // offscreen, xcb, wayland... chosen explicitly
  return std::getenv("DISPLAY") || std::getenv("WAYLAND_DISPLAY");
}

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

}  // namespace

int main(int argc, char** argv) {
  depthlab::util::ensureOpenBlasKernels(argv);  // may start this program again (see its header)
  if (!haveDisplay()) {
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

  QCommandLineParser cli;
  cli.addHelpOption();
  cli.addVersionOption();
  QCommandLineOption dbOption(QStringLiteral("db"), QStringLiteral("Run database."),
                              QStringLiteral("path"));
  cli.addOption(dbOption);
  QCommandLineOption groupOption(QStringLiteral("group"), QStringLiteral("Open the dashboard of a run group."),
                                 QStringLiteral("name"));
  QCommandLineOption shotOption(QStringLiteral("screenshot"),
                                QStringLiteral("Save the window as PNG after loading, then quit."),
                                QStringLiteral("file"));
  QCommandLineOption compareOption(QStringLiteral("compare"), QStringLiteral("Open a comparison of runs (ids, comma-separated)."),
                                   QStringLiteral("ids"));
  QCommandLineOption sizeOption(QStringLiteral("size"), QStringLiteral("Window size, e.g. 1500x2400 (screenshots)."),
                                QStringLiteral("WxH"));
  QCommandLineOption figureOption(QStringLiteral("figure-dialog"),
                                  QStringLiteral("Open the paper-figure dialog for runs (ids, comma-separated)."),
                                  QStringLiteral("ids"));
  cli.addOption(compareOption);
  cli.addOption(groupOption);
  cli.addOption(shotOption);
  cli.addOption(sizeOption);
  cli.addOption(figureOption);
  cli.process(app);

  const std::string dbPath = depthlab::util::defaultDatabasePath(cli.value(dbOption).toStdString());
  auto corpus = depthlab::data::ensureDefaultCorpus();
  try {
    depthlab::util::ensureDir(depthlab::util::parentDir(dbPath));
    auto store = depthlab::store::RunStore::open(dbPath);
    depthlab::ui::MainWindow window(std::move(store),
                                    {QString::fromStdString(corpus.path),
                                     QString::fromStdString(corpus.message), QString(), QString()});
    window.show();
    if (cli.isSet(sizeOption)) {
      const auto wh = cli.value(sizeOption).split(QLatin1Char('x'));
      if (wh.size() == 2) window.resize(wh[0].toInt(), wh[1].toInt());
    }
    QWidget* shotOf = &window;
    QPointer<depthlab::ui::FigureDialog> dialog;
    if (cli.isSet(figureOption)) {
      std::vector<int64_t> ids;
      for (const auto& id : cli.value(figureOption).split(QLatin1Char(','), Qt::SkipEmptyParts)) ids.push_back(id.toLongLong());
      dialog = window.openFigureDialog(ids, QStringLiteral("variance"));
      if (dialog) shotOf = dialog;
    }
    QPointer<depthlab::ui::GroupDashboard> dashboard;
    if (cli.isSet(groupOption)) {
      dashboard = window.dashboard(cli.value(groupOption));
      window.showTab(dashboard);
    }
    QPointer<depthlab::ui::CompareView> comparison;
    if (cli.isSet(compareOption)) {
      std::vector<int64_t> ids;
      for (const auto& id : cli.value(compareOption).split(QLatin1Char(','), Qt::SkipEmptyParts)) ids.push_back(id.toLongLong());
      comparison = window.compareRuns(ids);
      window.showTab(comparison);
    }
    if (cli.isSet(shotOption)) {
      screenshotWhenRead(&window, shotOf, cli.value(shotOption), dashboard, comparison, dialog);
    }
    return QApplication::exec();
  } catch (const std::exception& e) {
    QMessageBox::critical(nullptr, QStringLiteral("DepthLab"), QString::fromStdString(e.what()));
    return 1;
  }
}

// MainWindow; see main_window.h.
#include "main_window.h"

#include <QCloseEvent>
#include <QDir>
#include <QFileDialog>
#include <QFile>
#include <QFileInfo>
#include <QDockWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>

#include "compare/compare_view.h"
#include "dashboard/group_dashboard.h"
#include "experiment/run_config.h"
#include "export/figure_export.h"
#include "launch/run_launcher.h"
#include "runs/runs_browser.h"
#include "runs/runs_table_model.h"
#include "setup/setup_panel.h"
#include "store_poller.h"
#include "util/paths.h"

namespace depthlab::ui {

MainWindow::MainWindow(store::RunStore store, MainWindowOptions options, QWidget* parent)
    : QMainWindow(parent), m_options(std::move(options)) {
  const QString dbPath = QString::fromStdString(store.path());
  setWindowTitle(QStringLiteral("DepthLab — %1").arg(dbPath));
  resize(1500, 950);
  m_launcher = new RunLauncher(dbPath, m_options.cliPath, this);
  m_poller = new StorePoller(std::move(store), 200, this);

  m_setup = new SetupPanel;
  auto* dock = new QDockWidget(tr("Experiment set-up"), this);
  dock->setObjectName(QStringLiteral("setupDock"));
  dock->setWidget(m_setup);
  dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  addDockWidget(Qt::LeftDockWidgetArea, dock);

  m_runs = new RunsBrowser(m_poller);
  m_tabs = new QTabWidget;
  m_tabs->setObjectName(QStringLiteral("tabs"));
  m_tabs->setTabsClosable(true);
  m_tabs->addTab(m_runs, tr("Runs"));
  m_tabs->tabBar()->setTabButton(0, QTabBar::RightSide, nullptr);  // the runs browser stays
  setCentralWidget(m_tabs);
  statusBar()->showMessage(m_options.corpusMessage);

  connectStoreAndLauncher();
  connectRunsBrowser();
  connect(m_tabs, &QTabWidget::tabCloseRequested, this, &MainWindow::closeTab);
  m_poller->poll();
}

void MainWindow::connectStoreAndLauncher() {
  connect(m_poller, &StorePoller::runsChanged, this, &MainWindow::onRunsChanged);
  connect(m_poller, &StorePoller::storeError, this,
          [this](const QString& msg) { statusBar()->showMessage(tr("Run store: %1").arg(msg)); });
  connect(m_setup, &SetupPanel::launchRequested, this,
          [this](const std::vector<experiment::ExperimentConfig>& grid, int parallel) {
            m_launcher->setMaxParallel(parallel);
            auto groups = m_launcher->enqueueGroups(grid);
            statusBar()->showMessage(tr("Queued %1 group(s): %2")
                                         .arg(groups.size())
                                         .arg(groups.join(QStringLiteral(", "))));
          });
  connect(m_launcher, &RunLauncher::groupStarted, this, [this](const QString& g) {
    statusBar()->showMessage(tr("Training %1 (%2 more queued)").arg(g).arg(m_launcher->queued()));
  });
  connect(m_launcher, &RunLauncher::groupFinished, this,
          [this](const QString& g, int code, const QString& tail) {
            if (code != 0) {
              const QString last = tail.trimmed().section(QLatin1Char('\n'), -1);
              statusBar()->showMessage(tr("Group %1 ended with an error: %2").arg(g, last));
            } else {
              statusBar()->showMessage(tr("Group %1 finished").arg(g));
            }
            m_poller->poll();
          });
}

void MainWindow::connectRunsBrowser() {
  connect(m_runs, &RunsBrowser::message, this,
          [this](const QString& text) { statusBar()->showMessage(text); });
  connect(m_runs, &RunsBrowser::stopRequested, this, [this](const std::vector<int64_t>& ids) {
    for (int64_t id : ids) stopRun(id);
  });
  connect(m_runs, &RunsBrowser::cloneRequested, this, &MainWindow::cloneRun);
  connect(m_runs, &RunsBrowser::openRequested, this, [this](const std::vector<int64_t>& ids) {
    for (int64_t id : ids) {
      if (const auto* r = m_runs->model()->runAt(m_runs->model()->rowOfRun(id))) {
        if (auto* d = dashboard(QString::fromStdString(r->groupName))) showTab(d);
      }
    }
  });
  connect(m_runs, &RunsBrowser::compareRequested, this, [this](const std::vector<int64_t>& ids) {
    if (auto* v = compareRuns(ids)) showTab(v);
  });
  connect(m_runs, &RunsBrowser::figuresRequested, this, &MainWindow::exportFigureSetInteractive);
  connect(m_runs, &RunsBrowser::deleteRequested, this, &MainWindow::deleteRuns);
}

void MainWindow::closeTab(int index) {
  if (index == 0) return;  // the runs browser stays
  auto* w = m_tabs->widget(index);
  for (auto it = m_dashboards.begin(); it != m_dashboards.end(); ++it) {
    if (it->second == w) {
      m_dashboards.erase(it);
      break;
    }
  }
  m_tabs->removeTab(index);
  w->deleteLater();
}

void MainWindow::showTab(QWidget* tab) {
  if (tab && m_tabs->indexOf(tab) >= 0) m_tabs->setCurrentWidget(tab);
}

void MainWindow::exportFigureSetInteractive(const std::vector<int64_t>& ids) {
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Folder for the figure set"));
  if (dir.isEmpty()) return;
  // The style saved in the data folder is reused for every export (edit it, or save one
  // from the CLI with --save-style).
  const QString stylePath =
      QString::fromStdString(util::dataDir()) + QStringLiteral("/figure-style.json");
  const FigureStyle style = savedFigureStyle();
  try {
    auto r = exportFigureSet(m_poller->store(), ids, QStringLiteral("pdf"), dir, style);
    statusBar()->showMessage(
        tr("Wrote %1 files to %2 (style: %3)%4")
            .arg(r.files.size())
            .arg(dir, stylePath,
                 r.warnings.isEmpty() ? QString()
                                      : QStringLiteral(" — ") + r.warnings.join(QStringLiteral("; "))));
  } catch (const std::exception& e) {
    statusBar()->showMessage(tr("Export failed: %1").arg(QString::fromStdString(e.what())));
  }
}

RunsTableModel* MainWindow::runsModel() const { return m_runs->model(); }

MainWindow::~MainWindow() = default;

GroupDashboard* MainWindow::dashboard(const QString& group, bool open) {
  if (group.isEmpty()) return nullptr;
  auto it = m_dashboards.find(group);
  if (it != m_dashboards.end()) return it->second;
  if (!open) return nullptr;
  auto* d = new GroupDashboard(group);
  connect(d, &GroupDashboard::exportRequested, this,
          [this](const QString& figure, const std::vector<int64_t>& ids) { exportFigureInteractive(figure, ids); });
  d->refresh(m_poller->store(), {});
  if (d->data().runs().empty()) {
    delete d;
    return nullptr;
  }
  m_dashboards[group] = d;
  m_tabs->addTab(d, group);
  return d;
}

FigureStyle MainWindow::savedFigureStyle() const {
  const QString stylePath = QString::fromStdString(util::dataDir()) + QStringLiteral("/figure-style.json");
  FigureStyle style;
  QFile f(stylePath);
  if (f.open(QIODevice::ReadOnly)) {
    try { style = styleFromJson(QString::fromUtf8(f.readAll())); } catch (const std::exception&) {}
  } else {
    QDir().mkpath(QFileInfo(stylePath).absolutePath());
    if (f.open(QIODevice::WriteOnly)) f.write(styleToJson(style).toUtf8());
  }
  return style;
}

void MainWindow::exportFigureInteractive(const QString& figure, const std::vector<int64_t>& ids) {
  const QString path = QFileDialog::getSaveFileName(this, tr("Export %1 figure").arg(figure),
                                                    figure + QStringLiteral(".pdf"),
                                                    tr("PDF (*.pdf);;SVG (*.svg);;PNG (*.png)"));
  if (path.isEmpty()) return;
  ExportRequest req;
  req.runs = ids;
  req.kind = figureKindFromName(figure);
  req.format = QFileInfo(path).suffix().toLower();
  if (req.format.isEmpty()) req.format = QStringLiteral("pdf");
  req.path = path;
  req.style = savedFigureStyle();
  try {
    auto r = exportFigure(m_poller->store(), req);
    statusBar()->showMessage(tr("Wrote %1 (+ CSV and JSON)%2").arg(path,
                             r.warnings.isEmpty() ? QString() : QStringLiteral(" — ") + r.warnings.join(QStringLiteral("; "))));
  } catch (const std::exception& e) {
    statusBar()->showMessage(tr("Export failed: %1").arg(QString::fromStdString(e.what())));
  }
}

void MainWindow::selectRun(int64_t runId) { selectRuns({runId}); }
void MainWindow::selectRuns(const std::vector<int64_t>& runIds) { m_runs->selectRuns(runIds); }
std::vector<int64_t> MainWindow::selectedRunIds() const { return m_runs->selectedRunIds(); }
void MainWindow::setRunFilter(const QString& text, int column) { m_runs->setFilter(text, column); }
int MainWindow::visibleRunCount() const { return m_runs->visibleRunCount(); }

CompareView* MainWindow::compareRuns(const std::vector<int64_t>& runIds) {
  if (runIds.size() < 2) return nullptr;
  auto* v = new CompareView(m_poller->store(), runIds);
  QStringList ids;
  for (int64_t id : runIds) ids << QString::number(id);
  m_tabs->addTab(v, tr("Compare %1").arg(ids.join(QLatin1Char(','))));
  return v;
}

void MainWindow::deleteRuns(const std::vector<int64_t>& runIds, bool keepCheckpoints) {
  int deleted = 0;
  QStringList refused;
  for (int64_t id : runIds) {
    try {
      auto ck = m_poller->store().checkpoints(id);
      m_poller->store().deleteRun(id);  // refuses a run that is still training
      ++deleted;
      if (!keepCheckpoints) {
        for (const auto& c : ck) QFile::remove(QString::fromStdString(c.path));
        if (!ck.empty()) QDir().rmdir(QFileInfo(QString::fromStdString(ck.back().path)).absolutePath());
      }
    } catch (const std::exception& e) {
      refused << QString::fromStdString(e.what());
    }
  }
  if (!refused.isEmpty()) {
    QMessageBox::warning(this, tr("Some runs were not deleted"), refused.join(QLatin1Char('\n')));
  }
  statusBar()->showMessage(tr("Deleted %n run(s)", nullptr, deleted));
  m_poller->poll();
}

void MainWindow::stopRun(int64_t runId) {
  try {
    m_poller->store().requestStop(runId);
    statusBar()->showMessage(tr("Asked run %1 to checkpoint and stop").arg(runId));
  } catch (const std::exception& e) {
    statusBar()->showMessage(QString::fromStdString(e.what()));
  }
}

void MainWindow::cloneRun(int64_t runId) {
  auto run = m_poller->store().run(runId);
  if (!run) return;
  try {
    auto c = experiment::configOf(*run);
    c.name.clear();
    // A paired group cloned from one member: keep the schemes of its whole group.
    std::vector<std::string> schemes;
    for (const auto& r : m_poller->store().listRuns()) {
      if (r.groupName == run->groupName && !r.scheme.empty()) schemes.push_back(r.scheme);
    }
    if (!schemes.empty()) c.schemes = schemes;
    m_setup->setConfig(c);
    statusBar()->showMessage(tr("Set-up loaded from run %1: change it and launch").arg(runId));
  } catch (const std::exception& e) {
    statusBar()->showMessage(tr("Cannot clone run %1: %2").arg(runId).arg(QString::fromStdString(e.what())));
  }
}

void MainWindow::onRunsChanged(const std::vector<int64_t>& changed) {
  auto runs = m_poller->store().listRuns();
  m_runs->setRuns(runs, m_poller->store().runSummaries());
  // A group that is training gets its dashboard tab automatically.
  for (const auto& r : runs) {
    if (r.status == store::RunStatus::Running &&
        std::find(changed.begin(), changed.end(), r.id) != changed.end()) {
      dashboard(QString::fromStdString(r.groupName), true);
    }
  }
  for (auto& [group, d] : m_dashboards) d->refresh(m_poller->store(), changed);
}

void MainWindow::closeEvent(QCloseEvent* e) {
  bool active = m_launcher->busy() || m_launcher->queued() > 0;
  for (const auto& r : m_poller->store().listRuns()) active = active || r.status == store::RunStatus::Running;
  ClosePolicy policy = m_closePolicy;
  if (active && policy == ClosePolicy::Ask) {
    QMessageBox box(QMessageBox::Question, tr("Runs are still training"),
                    tr("Keep them running in the background (the next DepthLab window will show "
                       "them), or stop them now (each is checkpointed and marked stopped)?"),
                    QMessageBox::NoButton, this);
    auto* keep = box.addButton(tr("Keep running"), QMessageBox::AcceptRole);
    auto* stopAll = box.addButton(tr("Stop runs"), QMessageBox::DestructiveRole);
    box.addButton(QMessageBox::Cancel);
    box.exec();
    if (box.clickedButton() == keep) policy = ClosePolicy::KeepRunning;
    else if (box.clickedButton() == stopAll) policy = ClosePolicy::StopRuns;
    else { e->ignore(); return; }
  }
  if (active && policy == ClosePolicy::StopRuns) {
    m_launcher->clearQueue();
    for (const auto& r : m_poller->store().listRuns()) {
      if (r.status == store::RunStatus::Running) stopRun(r.id);
    }
  } else if (active) {
    m_launcher->detachOnExit();
  }
  e->accept();
}

}  // namespace depthlab::ui

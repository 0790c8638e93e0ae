// MainWindow; see main_window.h.
#include "main_window.h"

#include <qcustomplot.h>

#include <QCloseEvent>
#include <QDir>
#include <QFileDialog>

#include <QDockWidget>
#include <QFile>
#include <QFileInfo>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>

#include "compare/compare_view.h"
#include "dashboard/group_dashboard.h"
#include "experiment/run_config.h"
#include <QAction>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QSettings>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

#include "experiment/resource_estimate.h"
#include "export/figure_dialog.h"
#include "export/figure_export.h"
#include "hf_actions.h"
#include "launch/group_end_text.h"
#include "launch/reproduce_job.h"
#include "launch/run_launcher.h"
#include "plot/plot_helpers.h"
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
  connectHfActions();
  connectReproduce();
  makeMenus();
  connect(m_tabs, &QTabWidget::tabCloseRequested, this, &MainWindow::closeTab);
  restoreSettings();
  m_poller->poll();
}

// The figure style kept in the data folder for the next export (names, size, font).
static QString figureStylePath() {
  return QString::fromStdString(util::dataDir()) + QStringLiteral("/figure-style.json");
}

static QString settingsFile(const MainWindowOptions& o) {
  return o.settingsPath.isEmpty() ? QString::fromStdString(util::dataDir()) + QStringLiteral("/window.ini") : o.settingsPath;
}

void MainWindow::saveSettings() const {
  QSettings s(settingsFile(m_options), QSettings::IniFormat);
  s.setValue(QStringLiteral("window/geometry"), saveGeometry());
  s.setValue(QStringLiteral("window/state"), saveState());
  auto c = m_setup->config();
  c.name.clear();  // a new launch gets a new default name
  s.setValue(QStringLiteral("setup/config"), QString::fromStdString(experiment::toJson(c).dump()));
  s.sync();
}

void MainWindow::restoreSettings() {
  QSettings s(settingsFile(m_options), QSettings::IniFormat);
  if (s.contains(QStringLiteral("window/geometry"))) restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray());
  if (s.contains(QStringLiteral("window/state"))) restoreState(s.value(QStringLiteral("window/state")).toByteArray());
  const QString json = s.value(QStringLiteral("setup/config")).toString();
  if (json.isEmpty()) return;
  try {
    auto c = experiment::configFromJson(nlohmann::json::parse(json.toStdString()));
    c.name.clear();
    m_setup->setConfig(c);
  } catch (const std::exception&) {
    // A set-up from another version: the preset's defaults stay.
  }
}

void MainWindow::connectStoreAndLauncher() {
  connect(m_poller, &StorePoller::runsChanged, this, &MainWindow::onRunsChanged);
  connect(m_poller, &StorePoller::storeError, this,
          [this](const QString& msg) { statusBar()->showMessage(tr("Run store: %1").arg(msg)); });
  connect(m_setup, &SetupPanel::launchRequested, this,
          [this](const std::vector<experiment::ExperimentConfig>& grid, int parallel) {
            m_launcher->setMaxParallel(parallel);
            auto groups = m_launcher->enqueueGroups(grid);
            m_showWhenOpened.clear();  // the first of them to start comes to the front
            for (const auto& g : groups) m_showWhenOpened.insert(g);
            statusBar()->showMessage(tr("Queued %1 group(s): %2")
                                         .arg(groups.size())
                                         .arg(groups.join(QStringLiteral(", "))));
            m_setup->setGroupName(QString());  // the next launch gets the next free name
            updateLaunchState(m_poller->store().listRuns());
            saveSettings();
          });
  connect(m_launcher, &RunLauncher::groupPhase, this, [this](const QString& g, const QString& phase) {
    statusBar()->showMessage(tr("Group %1: %2").arg(g, phase));
    updateLaunchState(m_poller->store().listRuns());
  });
  connect(m_launcher, &RunLauncher::groupStarted, this, [this](const QString& g) {
    statusBar()->showMessage(tr("Training %1 (%2 more queued)").arg(g).arg(m_launcher->queued()));
  });
  connect(m_launcher, &RunLauncher::groupFinished, this,
          [this](const QString& g, int code, const QString& tail) {
            m_poller->poll();  // the runs' final status, which the message reports
            statusBar()->showMessage(groupEndMessage(g, m_poller->store().listRuns(), code, tail));
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
  connect(m_runs, &RunsBrowser::figuresRequested, this,
          [this](const std::vector<int64_t>& ids) { openFigureDialog(ids, QStringLiteral("variance")); });
  connect(m_runs, &RunsBrowser::resumeRequested, this, &MainWindow::resumeRuns);
  connect(m_runs, &RunsBrowser::trainFurtherRequested, this, &MainWindow::trainFurther);
  connect(m_runs, &RunsBrowser::deleteRequested, this, &MainWindow::deleteRuns);
}

void MainWindow::closeTab(int index) {
  if (index <= 0) return;  // the runs browser stays
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

RunsTableModel* MainWindow::runsModel() const { return m_runs->model(); }

MainWindow::~MainWindow() = default;

void MainWindow::resetAllZoom() {
  QWidget* tab = m_tabs->currentWidget();
  if (!tab) return;
  auto* d = qobject_cast<GroupDashboard*>(tab);
  if (!d) d = tab->findChild<GroupDashboard*>();
  if (d) {
    d->followAll();
    return;
  }
  for (auto* p : tab->findChildren<QCustomPlot*>()) {
    if (userZoomed(p)) resetZoom(p);
  }
}

GroupDashboard* MainWindow::dashboard(const QString& group, bool open) {
  if (group.isEmpty()) return nullptr;
  auto it = m_dashboards.find(group);
  if (it != m_dashboards.end()) return it->second;
  if (!open) return nullptr;
  const auto runs = m_poller->store().listRuns();
  if (std::none_of(runs.begin(), runs.end(), [&](const store::RunInfo& r) { return QString::fromStdString(r.groupName) == group; })) {
    return nullptr;
  }
  auto* d = new GroupDashboard(group);
  connect(d, &GroupDashboard::exportRequested, this,
          [this](const QString& figure, const std::vector<int64_t>& ids) { openFigureDialog(ids, figure); });
  // Its runs are read on the loader thread: the tab opens at once and fills when they arrive.
  d->refresh(m_poller->store(), {});
  m_dashboards[group] = d;
  m_tabs->addTab(d, group);
  return d;
}

FigureStyle MainWindow::savedFigureStyle() const {
  const QString stylePath = figureStylePath();
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

void MainWindow::saveFigureStyle(const FigureStyle& style) const {
  const QString stylePath = figureStylePath();
  QDir().mkpath(QFileInfo(stylePath).absolutePath());
  QFile f(stylePath);
  if (f.open(QIODevice::WriteOnly | QIODevice::Truncate)) f.write(styleToJson(style).toUtf8());
}

FigureDialog* MainWindow::openFigureDialog(const std::vector<int64_t>& runIds, const QString& figure) {
  if (runIds.empty()) return nullptr;
  auto* dialog = new FigureDialog(m_poller->store(), runIds, figure, savedFigureStyle(), this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &FigureDialog::styleSaved, this, [this](const FigureStyle& s) {
    saveFigureStyle(s);
    statusBar()->showMessage(tr("Figure saved; its style (size, font, names) is kept for the next export"));
  });
  dialog->show();
  return dialog;
}

void MainWindow::updateLaunchState(const std::vector<store::RunInfo>& runs) {
  std::set<std::string> taken;
  std::set<QString> inStore;
  for (const auto& r : runs) {
    taken.insert(r.groupName);
    inStore.insert(QString::fromStdString(r.groupName));
  }
  for (const auto& g : m_launcher->activeGroupNames()) taken.insert(g.toStdString());
  m_setup->setTakenGroupNames(std::move(taken));
  std::vector<std::tuple<QString, QString, QString>> pending;
  for (const auto& p : m_launcher->pending()) {
    if (inStore.count(p.group)) {  // its runs are in the table now
      m_launcher->forgetPending(p.group);
      continue;
    }
    const int place = m_launcher->queuePosition(p.group);
    const QString status = p.started ? tr("starting: %1 (%2 s)").arg(p.phase).arg(p.seconds, 0, 'f', 0)
                           : place > 0 ? tr("queued: %1 of %2 in line").arg(place).arg(m_launcher->queued())
                                       : tr("queued");
    for (const auto& scheme : p.schemes) pending.emplace_back(p.group, scheme, status);
  }
  m_runs->setRuns(runs, m_poller->store().runSummaries(), pending);
  // Estimates calibrate on the groups that finished on this machine.
  int finished = 0;
  for (const auto& r : runs) finished += r.status == store::RunStatus::Finished;
  if (finished != m_finishedGroupsSeen) {
    m_finishedGroupsSeen = finished;
    m_setup->setTimeCalibration(experiment::calibrateTime(runs, "cpu"), experiment::calibrateTime(runs, "cuda"));
  }
}

void MainWindow::selectRun(int64_t runId) { selectRuns({runId}); }
void MainWindow::selectRuns(const std::vector<int64_t>& runIds) { m_runs->selectRuns(runIds); }
std::vector<int64_t> MainWindow::selectedRunIds() const { return m_runs->selectedRunIds(); }
void MainWindow::setRunFilter(const QString& text, int column) { m_runs->setFilter(text, column); }
int MainWindow::visibleRunCount() const { return m_runs->visibleRunCount(); }

CompareView* MainWindow::compareRuns(const std::vector<int64_t>& runIds) {
  if (runIds.size() < 2) return nullptr;
  auto* v = newComparison(runIds);
  m_tabs->addTab(v, compareTitle(runIds));
  return v;
}

void MainWindow::onRunsChanged(const std::vector<int64_t>& changed) {
  auto runs = m_poller->store().listRuns();
  updateLaunchState(runs);
  // A group whose runs were all deleted loses its tab.
  std::set<QString> groups;
  for (const auto& r : runs) groups.insert(QString::fromStdString(r.groupName));
  std::vector<QWidget*> gone;
  for (const auto& [group, d] : m_dashboards) {
    if (!groups.count(group)) gone.push_back(d);
  }
  for (auto* w : gone) closeTab(m_tabs->indexOf(w));
  dropDeletedFromComparisons(runs);
  // A group that is training gets its dashboard tab automatically.
  for (const auto& r : runs) {
    if (r.status == store::RunStatus::Running &&
        std::find(changed.begin(), changed.end(), r.id) != changed.end()) {
      auto* d = dashboard(QString::fromStdString(r.groupName), true);
      if (d && m_showWhenOpened.count(QString::fromStdString(r.groupName))) {  // launched here
        showTab(d);
        m_showWhenOpened.clear();
      }
    }
  }
  for (auto& [group, d] : m_dashboards) d->refresh(m_poller->store(), changed);
}

void MainWindow::closeEvent(QCloseEvent* e) {
  bool active = m_launcher->busy() || m_launcher->queued() > 0 || m_reproduce->busy();
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
    m_reproduce->detachOnExit();
  }
  saveSettings();
  e->accept();
}

}  // namespace depthlab::ui

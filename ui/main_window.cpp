// MainWindow; see main_window.h.
#include "main_window.h"

#include <QCloseEvent>
#include <QDockWidget>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <nlohmann/json.hpp>

#include "dashboard/group_dashboard.h"
#include "launch/run_launcher.h"
#include "runs_table_model.h"
#include "setup/setup_panel.h"
#include "store_poller.h"

namespace depthlab::ui {

MainWindow::MainWindow(store::RunStore store, MainWindowOptions options, QWidget* parent)
    : QMainWindow(parent), m_options(std::move(options)) {
  const QString dbPath = QString::fromStdString(store.path());
  setWindowTitle(QStringLiteral("DepthLab — %1").arg(dbPath));
  resize(1500, 950);

  // Set-up panel (left dock)
  m_setup = new SetupPanel;
  auto* dock = new QDockWidget(tr("Experiment set-up"), this);
  dock->setObjectName(QStringLiteral("setupDock"));
  dock->setWidget(m_setup);
  dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  addDockWidget(Qt::LeftDockWidgetArea, dock);

  // Runs browser (first tab)
  m_runsModel = new RunsTableModel(this);
  m_runsView = new QTableView;
  m_runsView->setObjectName(QStringLiteral("runsView"));
  m_runsView->setModel(m_runsModel);
  m_runsView->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_runsView->setSelectionMode(QAbstractItemView::ExtendedSelection);
  m_runsView->horizontalHeader()->setStretchLastSection(true);
  m_runsView->verticalHeader()->hide();
  auto* stop = new QPushButton(tr("Stop"));
  auto* clone = new QPushButton(tr("Clone into set-up"));
  auto* open = new QPushButton(tr("Open dashboard"));
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(stop);
  buttons->addWidget(clone);
  buttons->addWidget(open);
  buttons->addStretch(1);
  auto* runsPage = new QWidget;
  auto* runsLayout = new QVBoxLayout(runsPage);
  runsLayout->addLayout(buttons);
  runsLayout->addWidget(m_runsView, 1);

  m_tabs = new QTabWidget;
  m_tabs->setObjectName(QStringLiteral("tabs"));
  m_tabs->setTabsClosable(true);
  m_tabs->addTab(runsPage, tr("Runs"));
  setCentralWidget(m_tabs);
  statusBar()->showMessage(m_options.corpusMessage);

  m_launcher = new RunLauncher(dbPath, m_options.cliPath, this);
  m_poller = new StorePoller(std::move(store), 200, this);

  connect(m_poller, &StorePoller::runsChanged, this, &MainWindow::onRunsChanged);
  connect(m_poller, &StorePoller::storeError, this,
          [this](const QString& msg) { statusBar()->showMessage(tr("Run store: %1").arg(msg)); });
  connect(m_setup, &SetupPanel::launchRequested, this,
          [this](const std::vector<experiment::ExperimentConfig>& grid, int parallel) {
            m_launcher->setMaxParallel(parallel);
            auto groups = m_launcher->enqueueGroups(grid);
            statusBar()->showMessage(tr("Queued %1 group(s): %2").arg(groups.size()).arg(groups.join(QStringLiteral(", "))));
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
  connect(stop, &QPushButton::clicked, this, [this] {
    for (int64_t id : selectedRunIds()) stopRun(id);
  });
  connect(clone, &QPushButton::clicked, this, [this] {
    auto ids = selectedRunIds();
    if (!ids.empty()) cloneRun(ids.front());
  });
  auto openSelected = [this] {
    for (int64_t id : selectedRunIds()) {
      int row = m_runsModel->rowOfRun(id);
      if (const auto* r = m_runsModel->runAt(row)) {
        if (auto* d = dashboard(QString::fromStdString(r->groupName))) m_tabs->setCurrentWidget(d);
      }
    }
  };
  connect(open, &QPushButton::clicked, this, openSelected);
  connect(m_runsView, &QTableView::doubleClicked, this, openSelected);
  connect(m_tabs, &QTabWidget::tabCloseRequested, this, [this](int index) {
    if (index == 0) return;  // the runs browser stays
    auto* w = m_tabs->widget(index);
    for (auto it = m_dashboards.begin(); it != m_dashboards.end(); ++it) {
      if (it->second == w) { m_dashboards.erase(it); break; }
    }
    m_tabs->removeTab(index);
    w->deleteLater();
  });
  m_poller->poll();
}

MainWindow::~MainWindow() = default;

GroupDashboard* MainWindow::dashboard(const QString& group, bool open) {
  if (group.isEmpty()) return nullptr;
  auto it = m_dashboards.find(group);
  if (it != m_dashboards.end()) return it->second;
  if (!open) return nullptr;
  auto* d = new GroupDashboard(group);
  d->refresh(m_poller->store(), {});
  if (d->data().runs().empty()) {
    delete d;
    return nullptr;
  }
  m_dashboards[group] = d;
  m_tabs->addTab(d, group);
  return d;
}

void MainWindow::selectRun(int64_t runId) {
  int row = m_runsModel->rowOfRun(runId);
  if (row >= 0) m_runsView->selectRow(row);
}

std::vector<int64_t> MainWindow::selectedRunIds() const {
  std::vector<int64_t> ids;
  for (const auto& idx : m_runsView->selectionModel()->selectedRows()) {
    if (const auto* r = m_runsModel->runAt(idx.row())) ids.push_back(r->id);
  }
  return ids;
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
  auto j = nlohmann::json::parse(run->configJson, nullptr, false);
  try {
    if (j.is_discarded()) throw experiment::ConfigError("the stored config is not valid JSON");
    auto c = experiment::configFromJson(j);
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
  std::vector<int64_t> keep = selectedRunIds();
  auto runs = m_poller->store().listRuns();
  m_runsModel->resetRuns(runs);
  for (int64_t id : keep) {
    int row = m_runsModel->rowOfRun(id);
    if (row >= 0) m_runsView->selectionModel()->select(m_runsModel->index(row, 0),
                                                       QItemSelectionModel::Select | QItemSelectionModel::Rows);
  }
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

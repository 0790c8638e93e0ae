// MainWindow; see main_window.h.
#include "main_window.h"

#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDesktopServices>
#include <QDir>
#include <QFileDialog>
#include <QFile>
#include <QFileInfo>
#include <QInputDialog>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QUrl>
#include <QDockWidget>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <nlohmann/json.hpp>

#include "compare/compare_view.h"
#include "dashboard/group_dashboard.h"
#include "experiment/run_config.h"
#include "export/figure_export.h"
#include "launch/run_launcher.h"
#include "runs_table_model.h"
#include "setup/setup_panel.h"
#include "store_poller.h"
#include "util/paths.h"

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
  m_runsProxy = new QSortFilterProxyModel(this);
  m_runsProxy->setSourceModel(m_runsModel);
  m_runsProxy->setSortRole(Qt::EditRole);
  m_runsProxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
  m_runsProxy->setFilterKeyColumn(-1);
  m_runsView->setModel(m_runsProxy);
  m_runsView->setSortingEnabled(true);
  m_runsView->sortByColumn(RunsTableModel::Id, Qt::DescendingOrder);
  m_runsView->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_runsView->setSelectionMode(QAbstractItemView::ExtendedSelection);
  m_runsView->horizontalHeader()->setStretchLastSection(true);
  m_runsView->verticalHeader()->hide();
  auto* stop = new QPushButton(tr("Stop"));
  auto* clone = new QPushButton(tr("Clone into set-up"));
  auto* open = new QPushButton(tr("Open dashboard"));
  auto* compare = new QPushButton(tr("Compare"));
  auto* rename = new QPushButton(tr("Rename…"));
  auto* tag = new QPushButton(tr("Tag…"));
  auto* notes = new QPushButton(tr("Notes…"));
  auto* reveal = new QPushButton(tr("Checkpoints"));
  auto* remove = new QPushButton(tr("Delete…"));
  auto* figures = new QPushButton(tr("Paper figures…"));
  auto* buttons = new QHBoxLayout;
  for (auto* b : {stop, clone, open, compare, figures, rename, tag, notes, reveal, remove}) buttons->addWidget(b);
  buttons->addStretch(1);
  m_filter = new QLineEdit;
  m_filter->setPlaceholderText(tr("filter runs…"));
  m_filter->setClearButtonEnabled(true);
  m_filterColumn = new QComboBox;
  m_filterColumn->addItem(tr("all columns"), -1);
  for (int c = 0; c < RunsTableModel::ColumnCount; ++c) m_filterColumn->addItem(RunsTableModel::columnName(c), c);
  auto* filterRow = new QHBoxLayout;
  filterRow->addWidget(m_filter, 1);
  filterRow->addWidget(m_filterColumn);
  auto* runsPage = new QWidget;
  auto* runsLayout = new QVBoxLayout(runsPage);
  runsLayout->addLayout(buttons);
  runsLayout->addLayout(filterRow);
  runsLayout->addWidget(m_runsView, 1);

  m_tabs = new QTabWidget;
  m_tabs->setObjectName(QStringLiteral("tabs"));
  m_tabs->setTabsClosable(true);
  m_tabs->addTab(runsPage, tr("Runs"));
  m_tabs->tabBar()->setTabButton(0, QTabBar::RightSide, nullptr);  // the runs browser stays
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
  auto applyFilter = [this] { setRunFilter(m_filter->text(), m_filterColumn->currentData().toInt()); };
  connect(m_filter, &QLineEdit::textChanged, this, applyFilter);
  connect(m_filterColumn, &QComboBox::currentIndexChanged, this, applyFilter);
  connect(compare, &QPushButton::clicked, this, [this] {
    auto ids = selectedRunIds();
    if (ids.size() < 2) { statusBar()->showMessage(tr("Select two or more runs to compare")); return; }
    if (auto* v = compareRuns(ids)) m_tabs->setCurrentWidget(v);
  });
  auto withOne = [this](auto action) {
    auto ids = selectedRunIds();
    if (ids.size() != 1) { statusBar()->showMessage(tr("Select one run")); return; }
    action(ids.front());
  };
  connect(rename, &QPushButton::clicked, this, [this, withOne] {
    withOne([this](int64_t id) {
      bool ok = false;
      auto r = m_poller->store().run(id);
      QString name = QInputDialog::getText(this, tr("Rename run"), tr("Name"), QLineEdit::Normal,
                                           QString::fromStdString(r ? r->name : std::string()), &ok);
      if (ok && !name.trimmed().isEmpty()) m_poller->store().renameRun(id, name.trimmed().toStdString());
      m_poller->poll();
    });
  });
  connect(tag, &QPushButton::clicked, this, [this] {
    bool ok = false;
    QString t = QInputDialog::getText(this, tr("Tag runs"), tr("Tag (prefix with - to remove)"), QLineEdit::Normal, QString(), &ok);
    if (!ok || t.trimmed().isEmpty()) return;
    for (int64_t id : selectedRunIds()) {
      if (t.startsWith(QLatin1Char('-'))) m_poller->store().removeTag(id, t.mid(1).trimmed().toStdString());
      else m_poller->store().addTag(id, t.trimmed().toStdString());
    }
    m_poller->poll();
  });
  connect(notes, &QPushButton::clicked, this, [this, withOne] {
    withOne([this](int64_t id) {
      bool ok = false;
      auto r = m_poller->store().run(id);
      QString text = QInputDialog::getMultiLineText(this, tr("Notes"), tr("Notes for run %1").arg(id),
                                                    QString::fromStdString(r ? r->notes : std::string()), &ok);
      if (ok) m_poller->store().setNotes(id, text.toStdString());
      m_poller->poll();
    });
  });
  connect(reveal, &QPushButton::clicked, this, [this, withOne] {
    withOne([this](int64_t id) {
      auto ck = m_poller->store().checkpoints(id);
      if (ck.empty()) { statusBar()->showMessage(tr("Run %1 has no checkpoint").arg(id)); return; }
      const QString dir = QFileInfo(QString::fromStdString(ck.back().path)).absolutePath();
      statusBar()->showMessage(dir);
      QDesktopServices::openUrl(QUrl::fromLocalFile(dir));
    });
  });
  connect(figures, &QPushButton::clicked, this, [this] {
    auto ids = selectedRunIds();
    if (ids.empty()) { statusBar()->showMessage(tr("Select the runs to plot (e.g. a Pre-LN / LNS pair)")); return; }
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Folder for the figure set"));
    if (dir.isEmpty()) return;
    // The style saved in the data folder is reused for every export (edit it, or save one
    // from the CLI with --save-style).
    const QString stylePath = QString::fromStdString(util::dataDir()) + QStringLiteral("/figure-style.json");
    const FigureStyle style = savedFigureStyle();
    try {
      auto r = exportFigureSet(m_poller->store(), ids, QStringLiteral("pdf"), dir, style);
      statusBar()->showMessage(tr("Wrote %1 files to %2 (style: %3)%4").arg(r.files.size()).arg(dir, stylePath,
                               r.warnings.isEmpty() ? QString() : QStringLiteral(" — ") + r.warnings.join(QStringLiteral("; "))));
    } catch (const std::exception& e) {
      statusBar()->showMessage(tr("Export failed: %1").arg(QString::fromStdString(e.what())));
    }
  });
  connect(remove, &QPushButton::clicked, this, [this] {
    auto ids = selectedRunIds();
    if (ids.empty()) return;
    QMessageBox box(QMessageBox::Warning, tr("Delete runs"),
                    tr("Delete %n run(s) and all their metrics? This cannot be undone.", nullptr,
                       static_cast<int>(ids.size())),
                    QMessageBox::Yes | QMessageBox::Cancel, this);
    auto* keep = new QCheckBox(tr("keep the checkpoint files"));
    keep->setChecked(true);
    box.setCheckBox(keep);
    if (box.exec() == QMessageBox::Yes) deleteRuns(ids, keep->isChecked());
  });
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

void MainWindow::selectRuns(const std::vector<int64_t>& runIds) {
  m_runsView->selectionModel()->clearSelection();
  for (int64_t id : runIds) {
    const int row = m_runsModel->rowOfRun(id);
    if (row < 0) continue;
    auto idx = m_runsProxy->mapFromSource(m_runsModel->index(row, 0));
    if (idx.isValid()) {
      m_runsView->selectionModel()->select(idx, QItemSelectionModel::Select | QItemSelectionModel::Rows);
    }
  }
}

std::vector<int64_t> MainWindow::selectedRunIds() const {
  std::vector<int64_t> ids;
  for (const auto& idx : m_runsView->selectionModel()->selectedRows()) {
    if (const auto* r = m_runsModel->runAt(m_runsProxy->mapToSource(idx).row())) ids.push_back(r->id);
  }
  return ids;
}

void MainWindow::setRunFilter(const QString& text, int column) {
  m_runsProxy->setFilterKeyColumn(column);
  m_runsProxy->setFilterFixedString(text);
}

int MainWindow::visibleRunCount() const { return m_runsProxy->rowCount(); }

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
  std::vector<int64_t> keep = selectedRunIds();
  auto runs = m_poller->store().listRuns();
  m_runsModel->resetRuns(runs, m_poller->store().runSummaries());
  selectRuns(keep);
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

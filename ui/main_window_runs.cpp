// MainWindow's actions on stored runs from the Runs tab: resume, train further, stop, clone into
// the set-up, delete. The training itself runs in depthlab-cli processes (RunLauncher); the
// rest of the window is in main_window.cpp.
#include <QDir>
#include <QFile>

#include <QFileInfo>
#include <QInputDialog>
#include <QMessageBox>
#include <QStatusBar>
#include <QTabWidget>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "compare/compare_view.h"
#include "experiment/run_config.h"
#include "launch/run_launcher.h"
#include "main_window.h"
#include "setup/setup_panel.h"
#include "store_poller.h"

namespace depthlab::ui {

void MainWindow::resumeRuns(const std::vector<int64_t>& runIds) {
  QStringList queued, refused;
  std::map<QString, std::vector<int64_t>> byGroup;  // one process per group: side by side
  for (int64_t id : runIds) {
    auto r = m_poller->store().run(id);
    if (!r) continue;
    if (r->status == store::RunStatus::Stopped || r->status == store::RunStatus::Crashed) {
      byGroup[QString::fromStdString(r->groupName)].push_back(id);
      // A run killed before its first checkpoint restarts from step 0 (its seed fixes its start).
      queued << (m_poller->store().checkpoints(id).empty()
                     ? tr("%1 (from step 0: it wrote no checkpoint)").arg(id)
                     : QString::number(id));
    } else {
      refused << tr("#%1 is %2").arg(id).arg(QString::fromLatin1(store::toString(r->status)));
    }
  }
  for (const auto& [group, ids] : byGroup) m_launcher->enqueueResume(ids, group);
  statusBar()->showMessage(
      (queued.isEmpty() ? QString()
                        : tr("Resuming run(s) %1. ").arg(queued.join(QStringLiteral(", ")))) +
      (refused.isEmpty() ? QString()
                         : tr("Only stopped or crashed runs resume: %1")
                               .arg(refused.join(QStringLiteral("; ")))));
}

void MainWindow::trainFurther(const std::vector<int64_t>& runIds) {
  int planned = 0;
  for (int64_t id : runIds) {
    if (auto r = m_poller->store().run(id))
      planned = std::max(planned, experiment::configOf(*r).optim.steps);
  }
  bool ok = false;
  const int to = QInputDialog::getInt(
      this, tr("Train further"),
      tr("Train the selected run(s) to step (planned: %1).\nThe learning-rate schedule keeps its "
         "length; past it the rate stays at its floor.")
          .arg(planned),
      2 * std::max(1, planned), 1, std::numeric_limits<int>::max(), std::max(1, planned / 2), &ok);
  if (ok) trainRunsTo(runIds, to);
}

void MainWindow::trainRunsTo(const std::vector<int64_t>& runIds, int64_t toStep) {
  QStringList queued, refused;
  std::map<QString, std::vector<int64_t>> byGroup;  // one process per group: side by side
  const auto summaries = m_poller->store().runSummaries();
  for (int64_t id : runIds) {
    auto r = m_poller->store().run(id);
    if (!r) continue;
    auto it = summaries.find(id);
    const int64_t trained = it == summaries.end() ? 0 : it->second.lastStep + 1;  // updates done
    if (r->status == store::RunStatus::Running) {
      refused << tr("#%1 is training").arg(id);
    } else if (const auto why = experiment::notTrainableReason(*r); !why.empty()) {
      refused << QString::fromStdString(why);  // imported, watched, read from TensorBoard
    } else if (toStep <= trained) {
      refused << tr("#%1 has trained %2 steps").arg(id).arg(trained);
    } else {
      byGroup[QString::fromStdString(r->groupName)].push_back(id);
      queued << QString::number(id);
    }
  }
  for (const auto& [group, ids] : byGroup) m_launcher->enqueueResume(ids, group, toStep);
  statusBar()->showMessage(
      (queued.isEmpty() ? QString()
                        : tr("Training run(s) %1 to step %2. ")
                              .arg(queued.join(QStringLiteral(", ")))
                              .arg(toStep)) +
      (refused.isEmpty() ? QString()
                         : tr("Not trained further: %1").arg(refused.join(QStringLiteral("; ")))));
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
        if (!ck.empty())
          QDir().rmdir(QFileInfo(QString::fromStdString(ck.back().path)).absolutePath());
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

QString MainWindow::compareTitle(const std::vector<int64_t>& runIds) {
  QStringList ids;
  for (int64_t id : runIds) ids << QString::number(id);
  return tr("Compare %1").arg(ids.join(QLatin1Char(',')));
}

CompareView* MainWindow::newComparison(const std::vector<int64_t>& runIds) {
  auto* view = new CompareView(runIds);
  using Data = std::shared_ptr<compare::CompareData>;
  const bool async = m_poller->readAsync<Data>(
      [runIds](store::RunStore& store) { return compare::loadCompareData(store, runIds); }, view,
      [view](Data data) { view->setData(std::move(data)); },
      [view](const QString& message) { view->setLoadError(message); });
  if (!async) view->setData(compare::loadCompareData(m_poller->store(), runIds));
  return view;
}

void MainWindow::dropDeletedFromComparisons(const std::vector<store::RunInfo>& runs) {
  std::set<int64_t> stored;
  for (const auto& r : runs) stored.insert(r.id);
  for (int i = m_tabs->count() - 1; i >= 1; --i) {
    auto* v = qobject_cast<CompareView*>(m_tabs->widget(i));
    if (!v) continue;
    const auto shown = v->runIds();
    std::vector<int64_t> kept;
    for (int64_t id : shown) {
      if (stored.count(id)) kept.push_back(id);
    }
    if (kept.size() == shown.size()) continue;
    // Built again without the deleted runs (or closed when fewer than two are left).
    const bool current = m_tabs->currentIndex() == i;
    closeTab(i);
    if (kept.size() < 2) continue;
    auto* fresh = newComparison(kept);
    m_tabs->insertTab(i, fresh, compareTitle(kept));
    if (current) m_tabs->setCurrentIndex(i);
  }
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
    statusBar()->showMessage(
        tr("Cannot clone run %1: %2").arg(runId).arg(QString::fromStdString(e.what())));
  }
}

}  // namespace depthlab::ui

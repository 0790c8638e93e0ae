// MainWindow's Hugging Face wiring (see hf_actions.h): import and probe in the background,
// failures in a window that does not block the lab, the imported run's dashboard when done,
// and the Runs tab's export. The rest of the window is in main_window.cpp.
#include <QFileDialog>
#include <QMessageBox>
#include <QStatusBar>

#include "dashboard/group_dashboard.h"
#include "hf_actions.h"
#include "main_window.h"
#include "runs/runs_browser.h"
#include "store_poller.h"

namespace depthlab::ui {

void MainWindow::connectHfActions() {
  m_hf = new HfActions(QString::fromStdString(m_poller->store().path()), m_options.cliPath,
                       m_options.corpusPath, this);
  connect(m_hf, &HfActions::message, this, [this](const QString& text) { statusBar()->showMessage(text); });
  connect(m_hf, &HfActions::failed, this, [this](const QString& title, const QString& text) {
    statusBar()->showMessage(title);
    auto* box = new QMessageBox(QMessageBox::Warning, title, text, QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("hfFailure"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setModal(false);
    box->show();  // not modal: the lab keeps running
  });
  connect(m_hf, &HfActions::imported, this, [this](int64_t runId) {
    m_poller->poll();
    selectRun(runId);
    if (auto r = m_poller->store().run(runId)) {
      if (auto* d = dashboard(QString::fromStdString(r->groupName))) showTab(d);
    }
  });
  connect(m_runs, &RunsBrowser::exportHfRequested, this, [this](int64_t runId) {
    const auto dir = QFileDialog::getSaveFileName(
        this, tr("New folder for the Hugging Face model of run %1").arg(runId),
        QStringLiteral("run-%1-hf").arg(runId));
    if (!dir.isEmpty()) m_hf->exportRun(runId, dir);
  });
}

}  // namespace depthlab::ui

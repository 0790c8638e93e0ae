// MainWindow's "Reproduce the paper…" wiring (see launch/reproduce_dialog.h and
// launch/reproduce_job.h): the dialog planned on the window's store, its Launch run as one
// depthlab-cli reproduce command in the background, progress in the status bar, a failure or
// the report in a window that does not block the lab. The rest of the window is in
// main_window.cpp.
#include <QMessageBox>
#include <QStatusBar>

#include "launch/reproduce_dialog.h"
#include "launch/reproduce_job.h"
#include "main_window.h"
#include "setup/setup_panel.h"
#include "store_poller.h"

namespace depthlab::ui {

namespace {

void showBox(QWidget* parent, QMessageBox::Icon icon, const QString& name, const QString& title,
             const QString& text, const QString& details = {}) {
  auto* box = new QMessageBox(icon, title, text, QMessageBox::Ok, parent);
  box->setObjectName(name);
  if (!details.isEmpty()) box->setDetailedText(details);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->setModal(false);
  box->show();  // not modal: the lab keeps running
}

}  // namespace

void MainWindow::connectReproduce() {
  m_reproduce =
      new ReproduceJob(QString::fromStdString(m_poller->store().path()), m_options.cliPath, this);
  connect(m_reproduce, &ReproduceJob::message, this, [this](const QString& text) {
    statusBar()->showMessage(text);
    m_poller->poll();
  });
  connect(
      m_reproduce, &ReproduceJob::failed, this, [this](const QString& title, const QString& error) {
        statusBar()->showMessage(title + QStringLiteral(": ") + error);
        showBox(this, QMessageBox::Warning, QStringLiteral("reproduceFailure"), title,
                tr("%1\n\nRuns it started are kept; launching the same recipe again resumes them.")
                    .arg(error));
        m_poller->poll();
      });
  connect(m_reproduce, &ReproduceJob::finished, this,
          [this](const QString& recipe, const QString& report) {
            statusBar()->showMessage(tr("Reproduce %1 finished").arg(recipe));
            QString figures;  // the command's "figures (...): DIR" line
            for (const auto& line : report.split(QLatin1Char('\n'))) {
              if (line.startsWith(QStringLiteral("figures")))
                figures = QStringLiteral("\n\nF") + line.mid(1);
            }
            showBox(this, QMessageBox::Information, QStringLiteral("reproduceReport"),
                    tr("Reproduce %1 finished").arg(recipe),
                    tr("Its runs are in the Runs tab, tagged reproduce:%1; the command's report "
                       "(beside the "
                       "paper's numbers) is under Show Details.%2")
                        .arg(recipe, figures),
                    report);
            m_poller->poll();
          });
}

ReproduceDialog* MainWindow::openReproduceDialog() {
  // The corpus of the last reproduction, else the set-up panel's when a recipe can read it.
  QString corpus = m_reproduceCorpus;
  if (corpus.isEmpty()) {
    const QString setup = QString::fromStdString(m_setup->config().data.corpus);
    if (reproduceCorpusProblem(setup).isEmpty()) corpus = setup;
  }
  auto* dialog = new ReproduceDialog(m_poller->store(), corpus, m_reproduceTokenizer, this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &ReproduceDialog::launchRequested, this,
          [this, dialog](const QString& recipe, const QStringList& args) {
            const ReproduceChoices c = dialog->choices();
            m_reproduceCorpus = c.corpus;
            m_reproduceTokenizer = c.tokenizer;
            if (!m_reproduce->start(recipe, args)) {
              showBox(
                  this, QMessageBox::Warning, QStringLiteral("reproduceBusy"),
                  tr("A reproduction is running"),
                  tr("Reproduce %1 is still running: wait for it to end, or stop its runs, before "
                     "launching %2.")
                      .arg(m_reproduce->recipe(), recipe));
            }
          });
  dialog->show();
  return dialog;
}

}  // namespace depthlab::ui

// MainWindow's menus (File, Run, View, Help): each action with its shortcut and a status tip,
// calling the window's own functions. No logic of its own; see main_window.h.
#include <QAction>
#include <QFileDialog>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>
#include <QTabWidget>

#include "compare/compare_view.h"
#include "hf_actions.h"
#include "main_window.h"
#include "runs/runs_browser.h"
#include "setup/setup_panel.h"

namespace depthlab::ui {

namespace {

// An action of `menu` with its keys and tip, calling `slot` on `owner`.
template <class Slot>
QAction* addMenuAction(QObject* owner, QMenu* menu, const QString& text, const QKeySequence& keys,
                       const QString& tip, Slot&& slot) {
  auto* a = menu->addAction(text);
  a->setShortcut(keys);
  a->setStatusTip(tip);
  a->setToolTip(tip);
  QObject::connect(a, &QAction::triggered, owner, std::forward<Slot>(slot));
  return a;
}

}  // namespace

void MainWindow::makeMenus() {
  makeFileMenu();
  makeRunMenu();
  makeViewMenu();
  makeHelpMenu();
}

void MainWindow::makeFileMenu() {
  auto* file = menuBar()->addMenu(tr("&File"));
  auto add = [this](auto&&... args) { return addMenuAction(this, args...); };
  add(file, tr("&Load set-up…"), QKeySequence::Open, tr("Load a JSON config into the set-up panel"), [this] {
    const auto f = QFileDialog::getOpenFileName(this, tr("Load config"), QString(), tr("JSON (*.json)"));
    if (f.isEmpty()) return;
    try {
      m_setup->loadFrom(f);
    } catch (const std::exception& e) {
      QMessageBox::warning(this, tr("Cannot load %1").arg(f), QString::fromStdString(e.what()));
    }
  });
  add(file, tr("&Save set-up…"), QKeySequence::Save, tr("Save the set-up as a JSON config"), [this] {
    const auto f = QFileDialog::getSaveFileName(this, tr("Save config"), QString(), tr("JSON (*.json)"));
    if (!f.isEmpty()) m_setup->saveTo(f);
  });
  add(file, tr("&Paper figures…"), QKeySequence(tr("Ctrl+E")), tr("Figures of the selected runs, with a preview"),
      [this] {
        const auto ids = selectedRunIds();
        if (ids.empty()) statusBar()->showMessage(tr("Select the runs to plot in the Runs tab first"));
        else openFigureDialog(ids, QStringLiteral("variance"));
      });
  add(file, tr("Open &Hugging Face model…"), QKeySequence(tr("Ctrl+H")),
      tr("Import a Llama / Mistral / Qwen2 folder (safetensors) and probe its depth on the default corpus"),
      [this] {
        const auto dir = QFileDialog::getExistingDirectory(this, tr("Hugging Face model folder"));
        if (!dir.isEmpty()) m_hf->openModel(dir);
      });
  file->addSeparator();
  add(file, tr("&Quit"), QKeySequence::Quit, tr("Close the lab (asks about runs still training)"), [this] { close(); });
}

void MainWindow::makeRunMenu() {
  auto add = [this](auto&&... args) { return addMenuAction(this, args...); };
  auto* run = menuBar()->addMenu(tr("&Run"));
  add(run, tr("&Launch set-up"), QKeySequence(tr("Ctrl+Return")), tr("Launch the set-up panel's groups"),
      [this] { m_setup->launch(); });
  add(run, tr("Re&produce the paper…"), QKeySequence(tr("Ctrl+Shift+P")),
      tr("Run one of the paper's experiments (Table 1, Fig. 4) with its cost here"),
      [this] { openReproduceDialog(); });
  add(run, tr("&Stop selected"), QKeySequence(tr("Ctrl+.")), tr("Checkpoint and stop the selected runs"),
      [this] { for (int64_t id : selectedRunIds()) stopRun(id); });
  add(run, tr("&Resume selected"), QKeySequence(tr("Ctrl+R")), tr("Continue the selected stopped or crashed runs"),
      [this] { resumeRuns(selectedRunIds()); });
  add(run, tr("&Clone into set-up"), QKeySequence(tr("Ctrl+L")), tr("Load the selected run's config into the set-up"),
      [this] {
        const auto ids = selectedRunIds();
        if (!ids.empty()) cloneRun(ids.front());
      });
  add(run, tr("C&ompare selected"), QKeySequence(tr("Ctrl+D")), tr("Compare the selected runs side by side"), [this] {
    if (auto* v = compareRuns(selectedRunIds())) showTab(v);
    else statusBar()->showMessage(tr("Select two or more runs to compare"));
  });
}

void MainWindow::makeViewMenu() {
  auto add = [this](auto&&... args) { return addMenuAction(this, args...); };
  auto* view = menuBar()->addMenu(tr("&View"));
  add(view, tr("&Runs"), QKeySequence(tr("Ctrl+1")), tr("The runs table"), [this] { m_tabs->setCurrentIndex(0); });
  add(view, tr("&Next tab"), QKeySequence::NextChild, tr("The next tab"),
      [this] { m_tabs->setCurrentIndex((m_tabs->currentIndex() + 1) % m_tabs->count()); });
  add(view, tr("&Close tab"), QKeySequence(tr("Ctrl+W")), tr("Close the current dashboard or comparison"),
      [this] { closeTab(m_tabs->currentIndex()); });
  add(view, tr("Reset all &zoom"), QKeySequence(tr("Ctrl+0")),
      tr("Every plot of the current tab back to its whole data, following new data again"),
      [this] { resetAllZoom(); });
  add(view, tr("&Filter runs"), QKeySequence::Find, tr("Type a filter: text, or conditions like val loss < 1.5"),
      [this] {
        m_tabs->setCurrentIndex(0);
        if (auto* f = m_runs->findChild<QLineEdit*>(QStringLiteral("runFilter"))) f->setFocus();
      });
}

void MainWindow::makeHelpMenu() {
  auto add = [this](auto&&... args) { return addMenuAction(this, args...); };
  auto* help = menuBar()->addMenu(tr("&Help"));
  add(help, tr("&Keyboard shortcuts"), QKeySequence::HelpContents, tr("Every menu action and its keys"), [this] {
    QStringList lines;
    for (auto* menu : menuBar()->findChildren<QMenu*>()) {
      for (auto* a : menu->actions()) {
        if (!a->shortcut().isEmpty()) lines << QStringLiteral("%1\t%2").arg(a->shortcut().toString(QKeySequence::NativeText), a->text().remove(QLatin1Char('&')));
      }
    }
    QMessageBox::information(this, tr("Keyboard shortcuts"), lines.join(QLatin1Char('\n')));
  });
  add(help, tr("&About DepthLab"), QKeySequence(), tr("Version and what the lab is for"), [this] {
    QMessageBox::about(this, tr("About DepthLab"),
                       tr("DepthLab %1\nA lab for the Curse of Depth (arXiv 2502.05795): train Pre-LN, "
                          "LNS and the other schemes, watch the per-layer variance, angular distance "
                          "and pruning, compare runs and export paper figures.").arg(QStringLiteral(DEPTHLAB_VERSION)));
  });
}

}  // namespace depthlab::ui

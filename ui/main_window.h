// MainWindow: the lab's window. For now a live runs browser over the run store and the
// selected run's loss curves; the set-up panel and depth dashboard plug in here.
// Holds no training state: everything it shows comes from the store through StorePoller.
#pragma once

#include <QMainWindow>

#include <memory>

#include "store/run_store.h"

class QCustomPlot;
class QLabel;
class QTableView;

namespace depthlab::ui {

class RunsTableModel;
class StorePoller;

struct MainWindowOptions {
  QString corpusPath;     // default corpus (or the one passed on the command line)
  QString corpusMessage;  // what happened preparing it
};

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  MainWindow(store::RunStore store, MainWindowOptions options, QWidget* parent = nullptr);
  ~MainWindow() override;

  RunsTableModel* runsModel() const { return m_runsModel; }
  QCustomPlot* lossPlot() const { return m_lossPlot; }
  StorePoller* poller() const { return m_poller; }
  void selectRun(int64_t runId);

 private:
  void onRunsChanged(const std::vector<int64_t>& changed);
  void showSelectedRun();

  StorePoller* m_poller = nullptr;
  RunsTableModel* m_runsModel = nullptr;
  QTableView* m_runsView = nullptr;
  QCustomPlot* m_lossPlot = nullptr;
  QLabel* m_plotInfo = nullptr;
  MainWindowOptions m_options;
  int64_t m_selectedRun = 0;
};

}  // namespace depthlab::ui

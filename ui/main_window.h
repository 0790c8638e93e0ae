// MainWindow: the lab. Left: the experiment set-up panel. Centre: the runs browser over the
// run store (runs/runs_browser.h: stop, resume, clone into the set-up panel, open a dashboard,
// ...) and one live dashboard tab per run group, plus comparison tabs; a menu bar with the
// shortcuts (Run ▸ Reproduce the paper… is main_window_reproduce.cpp's). Experiments run as
// separate depthlab-cli processes (RunLauncher, ReproduceJob); the window follows them, and
// runs started anywhere else, through the store (StorePoller); a launch is in the runs table
// from the moment it is queued, with its start-up phase. Keeps every launch
// a group of its own (unique names), remembers its size and the last set-up, calibrates the
// set-up's time estimates on the groups that finished here. Holds no training state.
#pragma once

#include <QMainWindow>

#include <map>
#include <set>
#include <memory>

#include "export/figure_style.h"
#include "store/run_store.h"

class QTabWidget;

namespace depthlab::ui {

class CompareView;
class GroupDashboard;
class RunLauncher;
class RunsBrowser;
class RunsTableModel;
class SetupPanel;
class StorePoller;

struct MainWindowOptions {
  QString corpusPath;     // default corpus (or the one passed on the command line)
  QString corpusMessage;  // what happened preparing it
  QString cliPath;        // depthlab-cli to launch; "" = next to this executable
  QString settingsPath;   // window size and last set-up; "" = <data dir>/window.ini
};

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  enum class ClosePolicy { Ask, KeepRunning, StopRuns };

  MainWindow(store::RunStore store, MainWindowOptions options, QWidget* parent = nullptr);
  ~MainWindow() override;

  RunsTableModel* runsModel() const;
  SetupPanel* setupPanel() const { return m_setup; }
  StorePoller* poller() const { return m_poller; }
  RunLauncher* launcher() const { return m_launcher; }
  class HfActions* hfActions() const { return m_hf; }
  /// The dashboard tab of a group, opening it when asked (nullptr when it has no runs).
  GroupDashboard* dashboard(const QString& group, bool open = true);
  void selectRun(int64_t runId);
  /// Asks the selected runs (or `runId`) to checkpoint and stop, through the store.
  void stopRun(int64_t runId);
  /// Loads a stored run's config into the set-up panel ("clone, change, launch").
  void cloneRun(int64_t runId);
  void setClosePolicy(ClosePolicy p) { m_closePolicy = p; }
  /// Comparison tabs lose runs deleted from the store: built again without them, or closed
  /// when fewer than two are left (main_window_runs.cpp).
  void dropDeletedFromComparisons(const std::vector<store::RunInfo>& runs);
  static QString compareTitle(const std::vector<int64_t>& runIds);
  /// Every plot of the current tab back to following its data (View > Reset all zoom, Ctrl+0).
  void resetAllZoom();
  /// Brings a tab of this window (a dashboard, a comparison) to the front.
  void showTab(QWidget* tab);
  /// Opens a comparison tab for the runs (2 or more).
  CompareView* compareRuns(const std::vector<int64_t>& runIds);
  /// Deletes runs and their rows; their checkpoint files too unless `keepCheckpoints`.
  void deleteRuns(const std::vector<int64_t>& runIds, bool keepCheckpoints);
  /// Opens the paper-figure dialog for the runs (figure: "loss", ..., "set"); returns it.
  class FigureDialog* openFigureDialog(const std::vector<int64_t>& runIds, const QString& figure);
  /// Opens the "Reproduce the paper…" dialog (a paper recipe, its cost here, Launch); returns it.
  class ReproduceDialog* openReproduceDialog();
  /// The running `depthlab-cli reproduce`, if any (main_window_reproduce.cpp).
  class ReproduceJob* reproduceJob() const { return m_reproduce; }
  /// Queues `resume` for each stopped or crashed run of `runIds` (says why for the others).
  void resumeRuns(const std::vector<int64_t>& runIds);
  /// Asks to which step to train the runs (default: twice the longest's steps), then
  /// trainRunsTo.
  void trainFurther(const std::vector<int64_t>& runIds);
  /// Queues `resume --steps toStep` for each run of `runIds` that is not training, was trained
  /// here (not imported) and has trained fewer steps (says why for the others).
  void trainRunsTo(const std::vector<int64_t>& runIds, int64_t toStep);
  /// Free-text filter of the runs browser, on every column (-1) or one.
  void setRunFilter(const QString& text, int column = -1);
  int visibleRunCount() const;
  void selectRuns(const std::vector<int64_t>& runIds);

 protected:
  void closeEvent(QCloseEvent* e) override;

 private:
  /// A comparison of the runs whose data is read on the store poller's loader thread (here
  /// when the store is in memory): it says it is reading until then.
  CompareView* newComparison(const std::vector<int64_t>& runIds);
  /// The figure style kept in the data folder (written with defaults on first use).
  FigureStyle savedFigureStyle() const;
  void saveFigureStyle(const FigureStyle& style) const;
  void connectStoreAndLauncher();
  void makeMenus();  // main_window_menus.cpp
  void makeFileMenu();
  void makeRunMenu();
  void makeViewMenu();
  void makeHelpMenu();
  void saveSettings() const;
  void restoreSettings();
  /// Group names the set-up panel must not reuse; pending launches for the runs table.
  void updateLaunchState(const std::vector<store::RunInfo>& runs);
  void connectRunsBrowser();
  void closeTab(int index);
  void onRunsChanged(const std::vector<int64_t>& changed);
  std::vector<int64_t> selectedRunIds() const;

  StorePoller* m_poller = nullptr;
  RunLauncher* m_launcher = nullptr;
  class HfActions* m_hf = nullptr;
  void connectHfActions();
  class ReproduceJob* m_reproduce = nullptr;
  QString m_reproduceCorpus, m_reproduceTokenizer;  // the last reproduction's, for the next
  void connectReproduce();
  SetupPanel* m_setup = nullptr;
  RunsBrowser* m_runs = nullptr;
  QTabWidget* m_tabs = nullptr;
  std::map<QString, GroupDashboard*> m_dashboards;
  std::set<QString> m_showWhenOpened;  // groups launched from the set-up panel, not yet shown
  MainWindowOptions m_options;
  ClosePolicy m_closePolicy = ClosePolicy::Ask;
  int m_finishedGroupsSeen = -1;  // recalibrates the estimates when this changes
};

}  // namespace depthlab::ui

// RunsBrowser: the first tab of the lab window. A sortable, filterable table of every run in
// the store (RunsTableModel) with the actions on the selected runs: stop, clone into the
// set-up, open the dashboard, compare, paper figures, rename, tag, notes, checkpoints, delete.
// Edits that only touch one run's row (rename, tag, notes) it makes itself through the store;
// everything that opens tabs, dialogs over several runs or launches processes it asks the
// window for through signals. Keeps the selection across refreshes. No training state.
#pragma once

#include <QWidget>

#include <cstdint>
#include <functional>
#include <map>
#include <tuple>
#include <vector>

#include "store/run_store.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QTableView;

namespace depthlab::ui {

class RunsFilterModel;
class RunsTableModel;
class StorePoller;

class RunsBrowser : public QWidget {
  Q_OBJECT
 public:
  explicit RunsBrowser(StorePoller* poller, QWidget* parent = nullptr);

  RunsTableModel* model() const { return m_model; }
  /// Replaces the rows (keeping the selection and, when only values changed, the order).
  /// `pending`: (group, scheme, status) of launches not in the store yet.
  void setRuns(std::vector<store::RunInfo> runs, std::map<int64_t, store::RunSummary> summaries,
               const std::vector<std::tuple<QString, QString, QString>>& pending = {});
  std::vector<int64_t> selectedRunIds() const;
  void selectRuns(const std::vector<int64_t>& runIds);
  /// Free-text filter on every column (-1) or one.
  void setFilter(const QString& text, int column = -1);
  int visibleRunCount() const;
  /// The delete dialog's text for `runIds`: the runs by id and name, and a warning for each
  /// one still training.
  QString deleteQuestion(const std::vector<int64_t>& runIds) const;

 signals:
  void stopRequested(const std::vector<int64_t>& runIds);
  void cloneRequested(int64_t runId);
  void exportHfRequested(int64_t runId);
  void openRequested(const std::vector<int64_t>& runIds);
  void compareRequested(const std::vector<int64_t>& runIds);
  void figuresRequested(const std::vector<int64_t>& runIds);
  void resumeRequested(const std::vector<int64_t>& runIds);
  void trainFurtherRequested(const std::vector<int64_t>& runIds);
  void deleteRequested(const std::vector<int64_t>& runIds, bool keepCheckpoints);
  /// A line for the window's status bar.
  void message(const QString& text);

 private:
  QWidget* makeButtons();
  QWidget* makeFilterRow();
  /// Calls action(ids) when at least `atLeast` runs are selected, else says `otherwise`.
  void withRuns(size_t atLeast, const QString& otherwise,
                const std::function<void(const std::vector<int64_t>&)>& action);
  /// Calls action(id) when exactly one run is selected, else says so.
  void withOneRun(const std::function<void(int64_t)>& action);
  void renameSelected();
  void tagSelected();
  void editNotesOfSelected();
  void revealCheckpointsOfSelected();
  void confirmDeleteOfSelected();

  StorePoller* m_poller;
  RunsTableModel* m_model = nullptr;
  RunsFilterModel* m_proxy = nullptr;
  QLabel* m_filterNote = nullptr;
  QTableView* m_view = nullptr;
  QLineEdit* m_filter = nullptr;
  QComboBox* m_filterColumn = nullptr;
};

}  // namespace depthlab::ui

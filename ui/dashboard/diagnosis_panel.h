// DiagnosisPanel: the dashboard's "which layers could go" view. Per run: its layers ranked by
// the measured single-layer pruning loss (most droppable first) beside the cheap proxies
// (adjacent angular distance, Block Influence, effectiveness E_l) with their ranks and E_l's
// class by the run's own thresholds, and each proxy's Spearman rank correlation with the
// measured pruning: which proxy can be trusted at this scale. The table is Compare's
// (diagnosis_table.h: full height, three significant figures); the runs' tables sit side by
// side where they fit and stack where they do not. Computes nothing itself.
#pragma once

#include <QString>
#include <QWidget>

#include <utility>
#include <vector>

#include "diagnosis_table.h"

class QLabel;
class QLayout;
class QTableWidget;

namespace depthlab::ui {

class DiagnosisPanel : public QWidget {
  Q_OBJECT
 public:
  explicit DiagnosisPanel(QWidget* parent = nullptr);
  /// One entry per run; redraws the tables.
  void setDiagnoses(const std::vector<DiagnosisRun>& runs);
  /// The table of run `i` (tests), and its summary line (Spearman per proxy).
  QTableWidget* table(int i) const;
  QString summary(int i) const;
  int runCount() const { return static_cast<int>(m_tables.size()); }

 private:
  void showRun(size_t i, const DiagnosisRun& run);

  QLayout* m_row = nullptr;  // FlowLayout: side by side where they fit, else stacked
  std::vector<QTableWidget*> m_tables;  // null while a run has no pruning measurement
  std::vector<QString> m_shown;         // what each box shows (run, step, thresholds, label)
  std::vector<QLabel*> m_summaries;
  std::vector<QWidget*> m_boxes;
};

}  // namespace depthlab::ui

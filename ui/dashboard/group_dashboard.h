// GroupDashboard: the live depth dashboard of one run group (one tab). Panels: loss (train /
// val per scheme, log-y, smoothing with the raw curve faint) and learning rate; per-layer
// output variance as curves and as layer x step heatmaps on one colour scale; adjacent
// angular distance heatmaps and the full (l, n) matrix at the cursor step; single-layer
// pruning heatmaps and bars at the cursor; layer effectiveness with the lazy / low
// thresholds; gradient norm per layer. One step scrubber drives every panel's cursor.
// Reads GroupData snapshots only; holds no training state.
#pragma once

#include <QTimer>
#include <QWidget>

#include <map>
#include <memory>
#include <vector>

#include "dashboard/group_data.h"

class QCheckBox;
class QCustomPlot;
class QLabel;
class QSlider;
class QVBoxLayout;

namespace depthlab::ui {

class GroupDashboard : public QWidget {
  Q_OBJECT
 public:
  explicit GroupDashboard(QString group, QWidget* parent = nullptr);
  ~GroupDashboard() override;

  const QString& group() const { return m_data.group(); }
  /// Pulls changed runs from the store and redraws (cheap when nothing changed).
  void refresh(store::RunStore& store, const std::vector<int64_t>& changed);
  /// Redraws every panel from the current snapshot (the replot the GUI bench times).
  void redraw();
  void setCursorStep(int64_t step);
  int64_t cursorStep() const { return m_cursor; }
  const GroupData& data() const { return m_data; }
  /// Every plot, by panel name ("loss", "lr", "variance:<scheme>", ...), for tests and export.
  const std::map<QString, QCustomPlot*>& plots() const { return m_plots; }
  QString decimationNote() const;
  /// The paper figure a panel corresponds to ("loss", "variance", "angular", "pruning"), or "".
  static QString figureForPanel(const QString& panel);

 Q_SIGNALS:
  /// The user asked to export a panel as a paper figure (context menu).
  void exportRequested(const QString& figure, const std::vector<int64_t>& runIds);

 protected:
  void resizeEvent(QResizeEvent* e) override;

 private:
  void rebuildPanels();          // when the set of schemes changes
  QCustomPlot* addPlot(const QString& name, QWidget* parent, int minHeight = 220);
  void drawLoss();
  void drawLayerPanels();
  void drawCursorPanels();

  GroupData m_data;
  std::vector<QString> m_schemes;
  std::map<QString, QCustomPlot*> m_plots;
  QVBoxLayout* m_panels = nullptr;
  QWidget* m_panelHost = nullptr;
  QSlider* m_scrubber = nullptr;
  QLabel* m_cursorLabel = nullptr;
  QLabel* m_status = nullptr;
  QLabel* m_decimation = nullptr;
  QCheckBox* m_logY = nullptr;
  QCheckBox* m_rowNormalize = nullptr;
  QSlider* m_smoothing = nullptr;
  std::vector<int64_t> m_steps;   // scrubber stops
  int64_t m_cursor = 0;
  bool m_followLatest = true;     // the cursor tracks the newest step until the user moves it
  QStringList m_decimationNotes;
  QTimer m_zoomTimer;             // re-decimates after a zoom / pan gesture
};

}  // namespace depthlab::ui

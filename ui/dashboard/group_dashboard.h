// GroupDashboard: the live depth dashboard of one run group (one tab). Panels: loss (train /
// val per scheme, log-y, smoothing with the raw curve faint) and learning rate; per-layer
// output variance as curves and as layer x step heatmaps on one colour scale; adjacent
// angular distance heatmaps and the full (l, n) matrix at the cursor step; single-layer
// pruning heatmaps and bars at the cursor; layer effectiveness with the lazy / low
// thresholds; gradient norm and Block Influence per layer; a diagnosis of which layers could be
// dropped (proxies against measured pruning, with their rank correlations). One step
// scrubber drives every panel's cursor; clicking a step panel sets it; a crosshair follows the
// mouse across the step panels. Zoom on the step axis is linked across panels (can be
// unlinked), a zoomed panel says it no longer follows new data, and "Follow" resumes. The
// loss can be read against steps, tokens or training time; variance and gradient norm on a
// log scale when asked, or where one run's values dwarf another's tenfold (the spec's rule,
// panel_specs.h, which the paper figure follows too). A progress bar with the group's ETA. Every
// panel saves as PNG or CSV from its context menu. Runs are named as everywhere
// (plot/run_labels.h). Reads GroupData snapshots only; holds no training state. The series come
// from the one loader (series_loader.h): on the store poller's loader thread while runs stream, so
// the GUI thread only draws.
#pragma once

#include <QTimer>
#include <QWidget>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <QPointer>

#include "dashboard/group_data.h"
#include "dashboard/panel_specs.h"
#include "dashboard/series_loader.h"

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QLabel;
class QProgressBar;
class QPushButton;
class QSlider;
class QVBoxLayout;

namespace depthlab::ui {

class DiagnosisPanel;
class StorePoller;

class GroupDashboard : public QWidget {
  Q_OBJECT
 public:
  explicit GroupDashboard(QString group, QWidget* parent = nullptr);
  ~GroupDashboard() override;

  const QString& group() const { return m_group; }
  /// Pulls changed runs from the store and redraws (cheap when nothing changed). With the
  /// window's store (a StorePoller's) the poller's loader thread reads them, the first time
  /// too ("Reading the group's runs…" until then), and the dashboard redraws when the snapshot
  /// arrives; with a store of its own (tests, the bench) it loads here.
  void refresh(store::RunStore& store, const std::vector<int64_t>& changed);
  /// Shows a loaded snapshot of this group (what refresh's load delivers) and redraws: at
  /// once, or (`staged`) in a few events of its own (scheduleRedraw).
  void applySnapshot(GroupSnapshot snapshot, bool staged = false);
  /// Whether a load on the loader thread is under way (tests, the bench).
  bool loading() const { return m_loading; }
  /// Whether a snapshot with its runs has arrived (the panels exist).
  bool isLoaded() const { return !m_data->runs().empty(); }
  /// Redraws every panel from the current snapshot (the replot the GUI bench times).
  void redraw();
  void setCursorStep(int64_t step);
  int64_t cursorStep() const { return m_cursor; }
  const GroupData& data() const { return *m_data; }
  GroupSnapshot snapshot() const { return m_data; }
  /// Every plot, by panel name ("loss", "lr", "variance:<scheme>", ...), for tests and export.
  const std::map<QString, QCustomPlot*>& plots() const { return m_plots; }
  QString decimationNote() const;
  /// The panel's Save PNG: the plot at 2x without the hover crosshair (a passing mouse had
  /// baked it into the file). False when the panel or the file cannot be had.
  bool savePanelPng(const QString& panel, const QString& path);
  /// The paper figure a panel corresponds to ("loss", "variance", "angular", "pruning"), or "".
  static QString figureForPanel(const QString& panel);
  /// Panels whose x axis is the training step (zoom links and the crosshair go across them).
  bool isStepPanel(const QString& panel) const;
  /// Zoom on the step axis applies to every step panel (default on).
  void setLinkedZoom(bool linked);
  /// Every panel back to following the newest data (resets their zoom).
  void followAll();
  /// The loss and lr panels' x axis: "step", "tokens" or "time" (training time, s).
  void setLossAxis(const QString& mode);
  /// Log scale for the variance curves and the gradient norm.
  void setLogLayers(bool on);
  /// What the progress bar shows ("150 / 600 steps · ETA 1.2 min") and its percentage.
  QString progressText() const;
  int progressPercent() const;
  DiagnosisPanel* diagnosis() const { return m_diagnosis; }
  /// The label each run's legend entries and titles use, by scheme.
  QString labelOf(const QString& scheme) const;

 Q_SIGNALS:
  /// The user asked to export a panel as a paper figure (context menu).
  void exportRequested(const QString& figure, const std::vector<int64_t>& runIds);

 protected:
  void resizeEvent(QResizeEvent* e) override;

 private:
  void addProgressRows(QVBoxLayout* outer);
  void addViewControls(QVBoxLayout* outer);
  void connectViewControls();
  void rebuildPanels();  // when the set of schemes changes
  QCustomPlot* addPlot(const QString& name, QWidget* parent, int minHeight = 220);
  void drawLoss();
  /// The learning-rate panel of drawLoss: every run's rate over `window` (steps).
  void drawLearningRate(QCustomPlot* lr, std::pair<double, double> window, int columns,
                        const QString& axisMode);
  void drawLayerCurves();
  /// Every heatmap panel, or those of `only`.
  void drawLayerHeatmaps(const dashboard::PanelSpec* only = nullptr);
  /// A staged redraw's stages: loss and status; the curves; each heatmap row; the bars at the
  /// cursor; the matrices and the diagnosis.
  int redrawStages() const;
  void redrawStage(int stage);
  void scheduleRedraw();
  void nextRedrawStage();
  int m_stage = -1;  // the next stage of a staged redraw; -1: none under way
  void drawCursorPanels();
  void drawCursorBars();
  void drawCursorMatrices();
  void drawBarsAtCursor(const dashboard::PanelSpec& spec, const std::string& metric,
                        bool thresholds);
  /// The matrix of a run for a panel's metric (its catalogue key), or nullptr.
  using MatrixOf = std::function<const store::Matrix*(const RunData&, const std::string& metric)>;
  void drawMatrixPanels(dashboard::PanelKind kind, const MatrixOf& matrixOf,
                        const MatrixOf& errorsOf, bool rowNormalise, const QString& labelSuffix);
  void drawProgress();
  void drawDiagnosis();
  void linkZoomFrom(QCustomPlot* source);
  void drawSnapshotProfiles();  // an imported model's per-layer panels: x = layer
  void moveCrosshair(double step);
  void showPanelMenu(QCustomPlot* p, const QString& name, const QPoint& pos);

  void startLoad(const std::vector<int64_t>& changed);

  QString m_group;
  GroupSnapshot m_data;  // immutable; replaced whole by the next snapshot
  QPointer<StorePoller> m_poller;
  bool m_loading = false;
  bool m_pendingAll = false;       // a poll during the load asked for every run
  std::vector<int64_t> m_pending;  // runs changed during the load (loaded after it)
  std::vector<QString> m_schemes;
  std::map<QString, QCustomPlot*> m_plots;
  QVBoxLayout* m_panels = nullptr;
  QWidget* m_lossSection = nullptr;  // hidden for imported models (nothing trained: empty axes)
  QWidget* m_panelHost = nullptr;
  QSlider* m_scrubber = nullptr;
  QLabel* m_cursorLabel = nullptr;
  QLabel* m_status = nullptr;
  QLabel* m_decimation = nullptr;
  QCheckBox* m_logY = nullptr;
  QCheckBox* m_logLayers = nullptr;
  QCheckBox* m_linkZoom = nullptr;
  QPushButton* m_follow = nullptr;
  QComboBox* m_lossAxis = nullptr;
  QProgressBar* m_progress = nullptr;
  QLabel* m_eta = nullptr;
  DiagnosisPanel* m_diagnosis = nullptr;
  std::map<QString, QString> m_labels;  // scheme -> run label
  // "metric:scheme" for the metrics only some schemes write (DyT saturation) that the scheme's
  // run has: such a panel is made only there (Pre-LN and LNS runs had empty DyT panels).
  std::set<QString> m_partialPanels;
  QCheckBox* m_rowNormalize = nullptr;
  QSlider* m_smoothing = nullptr;
  std::vector<int64_t> m_steps;  // scrubber stops
  int64_t m_cursor = 0;
  bool m_followLatest = true;  // the cursor tracks the newest step until the user moves it
  QStringList m_decimationNotes;
  QTimer m_zoomTimer;                   // re-decimates after a zoom / pan gesture
  QCustomPlot* m_zoomSource = nullptr;  // the panel the last gesture was on
};

}  // namespace depthlab::ui

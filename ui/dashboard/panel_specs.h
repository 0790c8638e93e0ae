// The group dashboard as a table: its sections, and in each the panels with their place in the
// grid, axis labels, the metric they draw (a metric-catalogue key), whether there is one per
// scheme, and the paper figure they export as. GroupDashboard builds its panels from this table
// and routes "Export as paper figure" by it; tests check it against the catalogue. No widgets.
#pragma once

#include <QString>

#include <set>
#include <string>
#include <vector>

namespace depthlab::ui::dashboard {

/// What a panel draws, and so which figure builder the dashboard calls for it.
enum class PanelKind {
  LossOverlay,       // train (smoothed over raw) and validation losses of every run
  LearningRate,      // the schedule of every run
  LayerCurves,       // one curve per layer over training, with the layer colour bar
  LayerHeatmap,      // layer x step, one colour scale across schemes
  MatrixAtCursor,    // the (l, n) angular matrix at the step cursor
  MatrixAtEnd,       // the (l, n) block-pruning matrix of the end of the run
  LayerBarsAtCursor  // per-layer bars of every run at the step cursor
};

struct PanelSpec {
  PanelKind kind = PanelKind::LayerCurves;
  QString key;  // the panel's name; per-scheme panels are named key + ":" + scheme
  bool perScheme = false;
  QString title;  // per-scheme panels: shown as "<scheme> — title" above the plot
  QString xLabel, yLabel;
  std::vector<QString> metrics;       // the metric-catalogue keys it draws
  QString figure;                     // the paper figure it exports as ("" = none)
  int row = 0, column = 0, span = 1;  // in its section's grid (per-scheme: column = scheme)
  int minHeight = 0;                  // 0 = the dashboard's default
  bool legend = false;
  bool thresholds = false;     // LayerBarsAtCursor: the lazy / low effectiveness lines
  bool followsCursor = false;  // the step cursor's line is drawn on it
};

struct SectionSpec {
  QString title;
  std::vector<PanelSpec> panels;
  std::vector<int> columnStretch;  // empty = equal
};

/// Every section of the dashboard, top to bottom.
const std::vector<SectionSpec>& dashboardSections();
/// The spec of a panel by its name (a per-scheme name matches its key); nullptr when none.
const PanelSpec* panelSpec(const QString& panelName);
/// A layer x step heatmap per scheme for each per-layer metric in `perLayerKeys` (catalogue
/// keys) that no panel in `drawn` shows: how a probe the catalogue puts on the dashboard
/// appears without a panel of its own (the "Other probes" section).
std::vector<PanelSpec> heatmapPanelsFor(const std::vector<std::string>& perLayerKeys,
                                        const std::set<QString>& drawn);
/// Every panel spec of one kind, in table order.
std::vector<const PanelSpec*> panelsOfKind(PanelKind kind);
/// Metrics the dashboard shows outside the panels (the per-run status line).
const std::vector<QString>& statusLineMetrics();

}  // namespace depthlab::ui::dashboard

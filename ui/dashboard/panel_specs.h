// The one description of a figure panel, which the dashboard (live style), Compare and the paper
// export (paper style) render: the dashboard's sections, and in each the panels with their place
// in the grid, axis labels, the metric they draw (a metric-catalogue key), whether there is one
// per scheme, and the paper figure they export as; and the rules every renderer takes from here:
// labels and units from the catalogue, value / error pairs, the log-axis rule, the figures the
// catalogue exports, the shades that tell runs of one scheme apart. No widgets, no drawing.
#pragma once

#include <QColor>
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

// --- the rules every renderer (dashboard, Compare, paper figure) takes from the spec --------

/// The catalogue's label of a metric with its unit: "pruning delta (nats)"; the key itself
/// when the catalogue has no such metric.
QString metricLabel(const QString& metric);
/// The catalogue key of the standard errors stored beside `metric` (its key + "_se", of the same
/// kind: pruning deltas, block pruning), or "" when it has none: the one value / error pairing
/// the dashboard, Compare and the paper figures draw error bars by.
std::string errorMetricOf(const std::string& metric);
/// Whether the panel's value axis may be logarithmic: its metric is one the catalogue scales
/// logarithmically (variance, gradient norms).
bool logAxis(const PanelSpec& spec);
/// The value axis of panels sharing one scale (a curves panel per run, a paper figure's
/// panels), by each panel's largest value: logarithmic when the metric allows it (logAxis) and
/// the user asks for it, or one run's largest value is a tenth or less of another's (Sandwich-LN
/// at 1,700 beside DeepNorm at 3: a linear scale flattens the smaller runs into their x axis).
bool sharedScaleIsLog(const PanelSpec& spec, const std::vector<double>& tops, bool userAsked);
/// The same for a view that draws `metric` (a catalogue key) without a panel spec (Compare's
/// per-layer profiles).
bool sharedScaleIsLog(const QString& metric, const std::vector<double>& tops, bool userAsked);
/// The k-th run (from 0) of one scheme in every view (Compare, paper figures): the scheme's
/// colour, then darker and lighter shades of it, so runs of one scheme stay apart while the
/// scheme stays recognisable. Lines stay solid: a dashed line is a validation loss everywhere.
QColor runShade(const QColor& schemeColour, int k);
/// The paper figures whose panels draw a metric the catalogue exports (its kExport flag), in
/// table order: the figure set `export --figure set` and the dialog offer.
std::vector<QString> exportedFigures();

}  // namespace depthlab::ui::dashboard

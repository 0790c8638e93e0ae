// See panel_specs.h.
#include "dashboard/panel_specs.h"

#include <algorithm>
#include <set>

#include "store/metric_catalogue.h"

namespace depthlab::ui::dashboard {

namespace {

QString key(const char* k) { return QString::fromLatin1(k); }

PanelSpec shared(PanelKind kind, const char* name, const char* x, const char* y, const char* metric,
                 const char* figure, int row, int column, int span = 1) {
  PanelSpec p;
  p.kind = kind;
  p.key = key(name);
  p.xLabel = QString::fromUtf8(x);
  p.yLabel = QString::fromUtf8(y);
  p.metrics = {key(metric)};
  p.figure = key(figure);
  p.row = row;
  p.column = column;
  p.span = span;
  p.legend = true;
  return p;
}

PanelSpec perScheme(PanelKind kind, const char* name, const char* title, const char* x,
                    const char* y, const char* metric, const char* figure, int row) {
  PanelSpec p;
  p.kind = kind;
  p.key = key(name);
  p.perScheme = true;
  p.title = QString::fromUtf8(title);
  p.xLabel = QString::fromUtf8(x);
  p.yLabel = QString::fromUtf8(y);
  p.metrics = {key(metric)};
  p.figure = key(figure);
  p.row = row;
  return p;
}

}  // namespace

std::vector<PanelSpec> heatmapPanelsFor(const std::vector<std::string>& perLayerKeys,
                                        const std::set<QString>& drawn) {
  std::vector<PanelSpec> out;
  for (const auto& k : perLayerKeys) {
    const QString metric = QString::fromStdString(k);
    if (drawn.count(metric)) continue;
    const auto& row = metrics::require(k, metrics::Kind::PerLayer);
    PanelSpec p = perScheme(PanelKind::LayerHeatmap, k.c_str(), "", "step", "layer", k.c_str(), "",
                            static_cast<int>(out.size()));
    p.key = metric + QStringLiteral("_map");
    p.title = QString::fromUtf8(row.label.data(), static_cast<int>(row.label.size()));
    out.push_back(p);
  }
  return out;
}

const std::vector<SectionSpec>& dashboardSections() {
  using namespace metrics;
  static const std::vector<SectionSpec> sections = [] {
    std::vector<SectionSpec> s;
    PanelSpec lr =
        shared(PanelKind::LearningRate, "lr", "step", "learning rate", kLr, "loss", 0, 1);
    lr.minHeight = 160;
    lr.legend = false;
    PanelSpec loss =
        shared(PanelKind::LossOverlay, "loss", "step", "loss", kLossTrain, "loss", 0, 0);
    loss.followsCursor = true;
    loss.metrics.push_back(key(kLossVal));  // train smoothed, validation dashed
    s.push_back({QStringLiteral("Loss and learning rate"), {loss, lr}, {3, 1}});
    s.push_back({QStringLiteral("Per-layer output variance (same colour scale across schemes)"),
                 {perScheme(PanelKind::LayerCurves, "variance", "variance per layer", "step",
                            "variance", kVariance, "variance", 0),
                  perScheme(PanelKind::LayerHeatmap, "variance_map", "variance heatmap", "step",
                            "layer", kVariance, "variance", 1)},
                 {}});
    s.push_back({QStringLiteral("Angular distance (paper's pattern reported after ~2B tokens; "
                                "small runs may differ)"),
                 {perScheme(PanelKind::LayerHeatmap, "angular_map", "adjacent d(x_l, x_l+1)",
                            "step", "layer", kAngularAdjacent, "angular", 0),
                  perScheme(PanelKind::MatrixAtCursor, "angular_ln", "d(x_l, x_l+n) at cursor",
                            "offset n", "layer l", kAngular, "angular", 1)},
                 {}});
    // The bars span every scheme's column (set when the panels are built).
    s.push_back(
        {QStringLiteral("Single-layer pruning: loss increase when block l is removed"),
         {perScheme(PanelKind::LayerHeatmap, "prune_map", "pruning delta", "step", "layer",
                    kPruneDelta, "pruning", 0),
          shared(PanelKind::LayerBarsAtCursor, "prune_bars", "layer", "delta loss", kPruneDelta,
                 "pruning", 1, 0, /*span=*/-1),
          perScheme(PanelKind::MatrixAtEnd, "block_prune", "block pruning (l, n), end of run",
                    "blocks removed n", "first block l", kBlockPrune, "block-pruning", 2)},
         {}});
    s.push_back({QStringLiteral("Skip effect: how much skipping block s changes each later "
                                "block's contribution (latest sweep)"),
                 {perScheme(PanelKind::MatrixAtEnd, "skip_effect", "skip effect (s, l), latest",
                            "later block l", "skipped block s", kSkipEffect, "", 0)},
                 {}});
    s.push_back(
        {QStringLiteral("Layer effectiveness, gradient norm and Block Influence at the cursor"),
         {shared(PanelKind::LayerBarsAtCursor, "effectiveness", "layer",
                 "E_l = |h_l − h_l−1|² / |h_l|²", kEffectiveness, "", 0, 0),
          shared(PanelKind::LayerBarsAtCursor, "grad_norm", "layer", "gradient norm",
                 kLayerGradNorm, "", 0, 1),
          shared(PanelKind::LayerBarsAtCursor, "block_influence", "layer",
                 "Block Influence (1 - cos)", kBlockInfluence, "", 0, 2)},
         {}});
    // A per-layer metric the catalogue puts on the dashboard without a panel above gets a
    // layer x step heatmap per scheme here: adding a probe is a catalogue row and its
    // computation; a panel of its own is optional.
    std::set<QString> drawn;
    for (const auto& section : s) {
      for (const auto& p : section.panels) drawn.insert(p.metrics.begin(), p.metrics.end());
    }
    SectionSpec other{QStringLiteral("Other probes"),
                      heatmapPanelsFor(keysFor(Kind::PerLayer, kDashboard), drawn),
                      {}};
    if (!other.panels.empty()) s.push_back(other);
    for (auto& section : s) {
      for (auto& p : section.panels) {
        if (p.kind == PanelKind::LayerCurves || p.kind == PanelKind::LayerHeatmap) {
          p.followsCursor = true;
        }
        if (p.key == QLatin1String("effectiveness")) p.thresholds = true;
        // A curves panel's value axis is its metric, named as the catalogue names it (the
        // paper figure's axis takes it from here too).
        if (p.kind == PanelKind::LayerCurves) p.yLabel = metricLabel(p.metrics.front());
      }
    }
    return s;
  }();
  return sections;
}

const PanelSpec* panelSpec(const QString& panelName) {
  const QString base = panelName.section(QLatin1Char(':'), 0, 0);
  for (const auto& section : dashboardSections()) {
    for (const auto& p : section.panels) {
      if (p.key == base) return &p;
    }
  }
  return nullptr;
}

std::vector<const PanelSpec*> panelsOfKind(PanelKind kind) {
  std::vector<const PanelSpec*> out;
  for (const auto& section : dashboardSections()) {
    for (const auto& p : section.panels) {
      if (p.kind == kind) out.push_back(&p);
    }
  }
  return out;
}

const std::vector<QString>& statusLineMetrics() {
  static const std::vector<QString> keys = {key(metrics::kLossTrain),
                                            key(metrics::kTokensPerSecond)};
  return keys;
}

QString metricLabel(const QString& metric) {
  const std::string key = metric.toStdString();
  for (auto kind : {metrics::Kind::PerLayer, metrics::Kind::Matrix, metrics::Kind::Scalar}) {
    if (const auto* m = metrics::find(key, kind)) {
      QString label = QString::fromUtf8(m->label.data(), static_cast<int>(m->label.size()));
      if (!m->unit.empty()) {
        label += QStringLiteral(" (%1)").arg(
            QString::fromUtf8(m->unit.data(), static_cast<int>(m->unit.size())));
      }
      return label;
    }
  }
  return metric;
}

std::string errorMetricOf(const std::string& metric) {
  for (auto kind : {metrics::Kind::PerLayer, metrics::Kind::Matrix}) {
    if (metrics::find(metric, kind) && metrics::find(metric + "_se", kind)) return metric + "_se";
  }
  return {};
}

namespace {

// Whether the catalogue scales `metric` logarithmically.
bool metricIsLog(const QString& metric) {
  const std::string key = metric.toStdString();
  for (auto kind : {metrics::Kind::PerLayer, metrics::Kind::Scalar}) {
    if (const auto* m = metrics::find(key, kind)) return m->scale == metrics::Scale::Log;
  }
  return false;
}

}  // namespace

bool logAxis(const PanelSpec& spec) {
  return !spec.metrics.empty() && metricIsLog(spec.metrics.front());
}

bool sharedScaleIsLog(const PanelSpec& spec, const std::vector<double>& tops, bool userAsked) {
  return !spec.metrics.empty() && sharedScaleIsLog(spec.metrics.front(), tops, userAsked);
}

bool sharedScaleIsLog(const QString& metric, const std::vector<double>& tops, bool userAsked) {
  if (!metricIsLog(metric)) return false;
  if (userAsked) return true;
  double largest = 0;
  for (double t : tops) largest = std::max(largest, t);
  return largest > 0 && std::any_of(tops.begin(), tops.end(),
                                    [&](double t) { return t > 0 && t * 10 <= largest; });
}

QColor runShade(const QColor& schemeColour, int k) {
  static const int factors[] = {100, 150, 60, 190, 40};
  if (k <= 0) return schemeColour;
  const int f = factors[k % 5];
  return f > 100 ? schemeColour.darker(f) : schemeColour.lighter(100 + (100 - f) * 2);
}

std::vector<QString> exportedFigures() {
  std::vector<QString> out;
  for (const auto& section : dashboardSections()) {
    for (const auto& p : section.panels) {
      if (p.figure.isEmpty() || std::find(out.begin(), out.end(), p.figure) != out.end()) continue;
      const bool exported = std::any_of(p.metrics.begin(), p.metrics.end(), [](const QString& k) {
        for (auto kind : {metrics::Kind::Scalar, metrics::Kind::PerLayer, metrics::Kind::Matrix}) {
          const auto* m = metrics::find(k.toStdString(), kind);
          if (m && (m->panels & metrics::kExport)) return true;
        }
        return false;
      });
      if (exported) out.push_back(p.figure);
    }
  }
  return out;
}

}  // namespace depthlab::ui::dashboard

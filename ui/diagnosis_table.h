// The layer-diagnosis table the dashboard and Compare both show: a run's layers ordered by the
// measured loss increase when each block alone is removed, beside the cheap proxies (adjacent
// angular distance, Block Influence, effectiveness E_l) and their ranks, E_l's class by the
// run's own thresholds (probes::classifyLayers' rule), at full height (no scroll bar of its
// own) with three significant figures; deltas within two standard errors of 0 in grey. Also
// the line that explains those thresholds. Lays out analysis::LayerDiagnosis values only.
#pragma once

#include <QString>

#include <cstdint>
#include <string>

#include "analysis/layer_diagnosis.h"
#include "probes/lazy_layers.h"

class QTableWidget;

namespace depthlab::ui {

/// One run's diagnosis as a view shows it.
struct DiagnosisRun {
  int64_t runId = 0;
  QString label;                       // "Pre-LN (#3)"
  analysis::LayerDiagnosis diagnosis;  // step -1: no pruning measured
  probes::LayerThresholds thresholds;  // from the run's config
};

/// `v` to three significant figures ("0.0123", "2.27", "-0.5", "1.23e+03"); "–" for NaN.
QString sig3(double v);
/// A proxy's short column name: "angular d", "BI", "E_l" (the key itself for others).
QString proxyShortName(const std::string& key);
/// "Thresholds, from this run's config: E_l below 0.05 is lazy, below 0.2 low, ...".
QString thresholdText(const probes::LayerThresholds& t);
/// "Pre-LN (#3) — layers to drop, at step 300": the title of a run's diagnosis.
QString diagnosisTitle(const DiagnosisRun& run);
/// The table of `run` (object name "diagnosisTable:<id>"), sized to show every row and column.
QTableWidget* makeDiagnosisTable(const DiagnosisRun& run);

}  // namespace depthlab::ui

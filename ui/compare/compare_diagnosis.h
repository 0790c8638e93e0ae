// Compare's layer diagnosis: for each compared run with a pruning measurement, a table of its
// layers ordered by the measured loss increase when each is removed, beside the cheap proxies
// (adjacent angular distance, Block Influence, effectiveness E_l) and their ranks, at full
// height with three significant figures, a line saying what the thresholds are (E_l classes
// by the run's own config, as analysis::classifyLayers counts them; the noise rule), and a
// small scatter of each proxy against the pruning delta with its Spearman rho. It shows
// analysis::LayerDiagnosis values and computes nothing but their layout.
#pragma once

#include <QString>

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/layer_diagnosis.h"
#include "analysis/lazy_layers.h"

class QGroupBox;

namespace depthlab::ui::compare {

struct DiagnosisRun {
  int64_t runId = 0;
  QString label;                         // "Pre-LN (#3)"
  analysis::LayerDiagnosis diagnosis;    // step -1: no pruning measured
  analysis::LayerThresholds thresholds;  // from the run's config
};

/// `v` to three significant figures ("0.0123", "2.27", "-0.5", "1.23e+03"); "–" for NaN.
QString sig3(double v);
/// A proxy's short column name: "angular d", "BI", "E_l" (the key itself for others).
QString proxyShortName(const std::string& key);
/// "E_l: lazy below 0.05, low below 0.2, effective at or above (this run's config) ...".
QString thresholdText(const analysis::LayerThresholds& t);

/// A group box with every run's table (named "diagnosisTable:<id>"), thresholds line
/// ("diagnosisThresholds:<id>") and one scatter per proxy ("diagnosisScatter:<id>:<key>",
/// whose property "spearman" holds the rho it prints, invalid when there is none).
QGroupBox* makeDiagnosisBox(const std::vector<DiagnosisRun>& runs);

}  // namespace depthlab::ui::compare

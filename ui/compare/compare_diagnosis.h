// Compare's layer diagnosis: for each compared run with a pruning measurement, a table of its
// layers ordered by the measured loss increase when each is removed, beside the cheap proxies
// (adjacent angular distance, Block Influence, effectiveness E_l) and their ranks, at full
// height with three significant figures, a line saying what the thresholds are (E_l classes
// by the run's own config, as probes::classifyLayers counts them; the noise rule), and a
// small scatter of each proxy against the pruning delta with its Spearman rho. It shows
// analysis::LayerDiagnosis values and computes nothing but their layout.
#pragma once

#include <QString>

#include <cstdint>
#include <string>
#include <vector>

#include "diagnosis_table.h"

class QGroupBox;

namespace depthlab::ui::compare {

using ui::DiagnosisRun;

/// A group box with every run's table (named "diagnosisTable:<id>"), thresholds line
/// ("diagnosisThresholds:<id>") and one scatter per proxy ("diagnosisScatter:<id>:<key>",
/// whose property "spearman" holds the rho it prints, invalid when there is none).
QGroupBox* makeDiagnosisBox(const std::vector<DiagnosisRun>& runs);

}  // namespace depthlab::ui::compare

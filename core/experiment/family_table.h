// The family table: imported models (and trained runs) side by side by depth usefulness, like
// the lazy-layer table across model families the Curse of Depth paper opens with. Per model: its
// family (from the import record's architecture, or the scheme of a trained run), its layers,
// its lazy / low / effective layers by E_l with the run's own thresholds, and its lazy layers by
// measured pruning loss (removing the layer raises the probe loss by less than a share of it);
// per layer, the profiles a figure draws against relative depth (pruning loss with its error,
// angular distance to the next layer). Reads the store's latest probe rows; no torch, computes
// no probe (`depthlab-cli analyze` does).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "probes/lazy_layers.h"
#include "store/run_store.h"

namespace depthlab::experiment {

struct FamilyRow {
  int64_t runId = 0;
  std::string name;
  std::string family;        // "Llama", "Qwen2", ... or "trained: lns" for a run trained here
  std::string architecture;  // the import record's ("" for a trained run)
  int nLayers = 0;
  std::optional<int64_t> probeStep;    // step of the rows read
  probes::LayerThresholds thresholds;  // the run's own E_l thresholds
  std::optional<probes::LazyCounts> byEffectiveness;
  std::optional<double> probeLoss;       // the full model's loss on the probe set
  std::optional<int> lazyByPruning;      // delta < pruneShare * probeLoss
  std::optional<double> lensSettle;      // the logit lens's mean settle block (1..L)
  std::optional<double> spectralAlpha;   // the weights' mean power-law alpha
  std::optional<double> effectiveDepth;  // Hu et al.'s ratio from the logit lens (0..1]
  std::optional<double> jumpStrength;    // the last block's angular step over the middle ones'
  std::vector<float> effectiveness, pruneDelta, pruneDeltaError, angularNext;  // (L) each
  std::vector<std::string> missing;  // metrics the run lacks
};

struct FamilyTable {
  double pruneShare = 0.01;  // a layer is lazy by pruning below this share of the probe loss
  std::vector<FamilyRow> rows;
};

/// "Llama" for LlamaForCausalLM, "Gemma 2" for Gemma2ForCausalLM, ...; the name without its
/// head suffix for a family not listed.
std::string familyOfArchitecture(const std::string& architecture);

/// The table of `runIds` (throws store::StoreError for an unknown id).
FamilyTable makeFamilyTable(store::RunStore& store, const std::vector<int64_t>& runIds,
                            double pruneShare = 0.01);

/// What the CLI, Compare and the LaTeX table show of a row: lazy, low and effective layers by
/// E_l, the E_l thresholds ("0.05 / 0.2") and lazy layers by pruning, each count "n (p%)", "-"
/// when not measured.
std::vector<std::string> familyCountCells(const FamilyRow& r);

/// One line per model: counts, shares and the thresholds used (RFC 4180 quoting).
std::string familyTableCsv(const FamilyTable& t);
/// The same as a LaTeX tabular (booktabs), names escaped.
std::string familyTableLatex(const FamilyTable& t);
/// One line per model and layer: relative depth l/L, pruning delta and its error, angular
/// distance to the next layer, E_l: what the family figures draw.
std::string familyProfilesCsv(const FamilyTable& t);

}  // namespace depthlab::experiment

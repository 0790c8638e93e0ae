// Comparing stored runs: the config keys that differ, seed groups (runs equal but for the
// seed), the depth-scaling table (final validation loss / perplexity per depth and scheme,
// with LNS's gain over Pre-LN) and a results table like the paper's Table 1 (perplexity per
// model size per scheme) written as CSV or a LaTeX tabular. Reads the run store; no torch.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/run_store.h"

namespace depthlab::analysis {

/// The name a scheme goes by in tables: what the figure window named it in the store
/// (`names`, RunStore::displayNames: "scheme:lns" -> "LNS (ours)"), else the scheme
/// catalogue's ("Pre-LN", "LNS"; an unknown id as it is).
std::string schemeName(const std::map<std::string, std::string>& names, const std::string& scheme);

/// Flattened config keys ("model.nLayers") whose values differ between the runs, with each
/// run's value (JSON text, "(missing)" when absent). Keys that never matter for comparison
/// (name, corpus cache paths) are kept: the user decides.
std::map<std::string, std::vector<std::string>> configDiff(const std::vector<store::RunInfo>& runs);

/// Runs grouped by scheme + config with the seed and name removed.
struct SeedGroup {
  std::string key;  // e.g. "lns | L=24 d=64"
  std::string scheme;
  int depth = 0, width = 0;
  int64_t params = 0;
  std::vector<int64_t> runIds;
  std::vector<double> finalValLoss;  // runs without a validation loss are left out
  bool probeLoss = false;  // checkpoint series: their last probe-text loss (no validation split)
  std::string schemeName;  // the scheme's display name (the store's, else "Pre-LN", ...)
};
/// Checkpoint series (PolyPythias' seeds) group by architecture and shape, not by where their
/// files are, and stand in their last checkpoint's probe-text loss for a validation loss.
/// `atStep`: each trained run's validation loss at or before that step (runs trained to
/// different lengths compared at one point; experiment::fewestPlannedSteps); imported models'
/// and, without it, every run's last.
std::vector<SeedGroup> seedGroups(store::RunStore& store, const std::vector<store::RunInfo>& runs,
                                  std::optional<int64_t> atStep = std::nullopt);

struct ResultsTable {
  std::vector<std::string> columns;   // model sizes, e.g. "1.2M (L=24)"
  std::vector<std::string> rows;      // schemes
  std::vector<std::string> rowNames;  // their display names (LaTeX); empty: defaults
  std::vector<std::vector<std::optional<double>>> ppl;  // [row][column], mean over seeds
  std::vector<std::vector<int>> n;                      // seeds behind each cell
  std::string toCsv() const;
  /// A LaTeX tabular with the best (lowest) perplexity of each column in bold.
  std::string toLatex() const;
};
/// Columns by (depth, width) ordered by parameter count; rows by scheme.
ResultsTable resultsTable(const std::vector<SeedGroup>& groups);

struct DepthPoint {
  int depth = 0;
  double lossVal = 0;
  int n = 0;
};
/// Final validation loss against depth for each scheme (mean over seeds and widths kept apart
/// by the caller), and the LNS gain in percent of Pre-LN's perplexity at each depth.
std::map<std::string, std::vector<DepthPoint>> depthScaling(const std::vector<SeedGroup>& groups);
std::map<int, double> lnsGainPercent(const std::map<std::string, std::vector<DepthPoint>>& scaling);

}  // namespace depthlab::analysis

// The depth study: every scheme of a launch (`train --scheme all-depth-fixes`, or several such
// groups at other seeds) ranked in one table, by validation loss (the mean over its seeds with
// the seeds' min-max band) and by how useful its deep layers are: the last layer's output
// variance, the pruning loss of the deepest quarter of layers (the mean loss increase when each
// layer of the deepest max(1, L/4) is removed alone) and the effective layers by E_l (with each
// run's own thresholds, analysis/lazy_layers). Ranks only what the data separate: neighbours
// within their combined standard error share a rank ("=3"), and the notes say when the runs
// are too short, or too alike, to rank. Reads the store's probe rows (the newest at or
// before a step); computes no probe (`depthlab-cli analyze` does) and draws nothing
// (ui/export/study_figures does). A scheme whose runs lack a probe keeps "-" there and a note.
// No torch here.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/statistics.h"
#include "store/run_store.h"

namespace depthlab::analysis {

/// Layers the deepest quarter of L holds: max(1, L / 4) (L >= 1), the last ones.
int deepQuarterLayers(int nLayers);

struct StudyRow {
  std::string scheme, displayName;     // "lns", "LNS" (model::schemeDisplayName)
  std::vector<int64_t> runIds, seeds;  // the scheme's runs, one per seed
  int nLayers = 0;
  // Over the runs that have the quantity (n in each Summary; nullopt: none has it).
  std::optional<Summary> lossVal;           // last validation loss
  std::optional<Summary> varianceLast;      // output variance of the last layer
  std::optional<Summary> pruneDeepQuarter;  // mean loss increase, each deep layer removed
  std::optional<Summary> effectiveLayers;   // layers with E_l at or above the low threshold
  std::vector<double> varianceProfile;      // (L) mean over runs of the newest variance row
  int lossRank = 0;                         // 1 = lowest validation loss; 0: no validation loss
  int depthRank = 0;  // 1 = deep layers most useful (largest deep-quarter pruning loss,
                      // ties by effective layers); 0: no pruning probe
  // A rank shared with a neighbour whose value lies within the combined standard error (the
  // seeds' spread over several seeds; a single run's pruning deltas carry their own error over
  // the probe sequences): shown "=3", the data do not tell them apart.
  bool lossTied = false, depthTied = false;
  std::vector<std::string> notes;  // what it lacks and how to measure it
};

struct DepthStudy {
  std::vector<StudyRow> rows;      // by loss rank, schemes without a loss last
  std::vector<std::string> notes;  // about the selection as a whole (mixed shapes, skipped runs)
  int maxSeeds = 0;                // the most runs any scheme has
};

/// The study of `runIds` (every run of a group: group:NAME; several groups for seeds), each run
/// read at its newest rows at or before `atStep`. Imported models are left out (with a note);
/// throws store::StoreError for an unknown id.
DepthStudy makeDepthStudy(store::RunStore& store, const std::vector<int64_t>& runIds,
                          int64_t atStep = INT64_MAX);

/// "3.412" for one value, "3.412 [3.391, 3.433]" (mean [min, max]) over seeds; "-" when absent.
/// With `withError`, "0.0123 ± 0.0009" (the standard error) where one is known.
std::string studyCell(const std::optional<Summary>& s, const char* format = "%.4g",
                      bool withError = false);
/// "3", "=3" for a tied rank, "-" for none.
std::string rankCell(int rank, bool tied);
/// Header and one row of cells per scheme: what `report --study` prints.
std::vector<std::string> studyHeader();
std::vector<std::vector<std::string>> studyCells(const DepthStudy& study);
/// Every row with every number (mean, sd, min, max, n per quantity), the ranks and the notes.
nlohmann::json studyJson(const DepthStudy& study);

}  // namespace depthlab::analysis

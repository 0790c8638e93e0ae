// See cli_study.h.
#include "cli_study.h"

#include <cstdio>
#include <iostream>

#include "analysis/depth_study.h"
#include "text_table.h"

namespace depthlab::cli {

void reportStudy(store::RunStore& store, const GlobalOptions& g, const std::vector<int64_t>& runIds,
                 int64_t atStep) {
  const auto study = analysis::makeDepthStudy(store, runIds, atStep);
  if (g.json) {
    auto j = analysis::studyJson(study);
    j["step"] = atStep == INT64_MAX ? nlohmann::json() : nlohmann::json(atStep);
    std::cout << j.dump(2) << "\n";
    return;
  }
  if (study.rows.empty()) {
    throw std::runtime_error(
        "no trained run to study among the runs given (imported models are "
        "not schemes; `depthlab-cli runs list` shows the groups)");
  }
  std::printf("%s", formatTextTable(analysis::studyHeader(), analysis::studyCells(study)).c_str());
  std::printf(
      "\nloss #: rank by validation loss (lowest first). depth #: rank by deep-layer usefulness,\n"
      "the mean loss increase when each layer of the deepest quarter (the last max(1, L/4)) is\n"
      "removed alone (largest first; ties by effective layers). effective (E_l): layers with\n"
      "E_l at or above the run's low threshold, of L.%s\n"
      "=k: a rank shared with the scheme above, whose value lies within the combined standard\n"
      "error (the seeds' spread; one run's pruning deltas carry their own, printed ± se).\n",
      study.maxSeeds > 1 ? " Over seeds: mean [min, max]." : "");
  for (const auto& n : study.notes) std::printf("note: %s\n", n.c_str());
  for (const auto& r : study.rows) {
    for (const auto& n : r.notes) std::printf("%s: %s\n", r.displayName.c_str(), n.c_str());
  }
  std::printf(
      "Pruning and E_l at small scale may run opposite to the paper, whose pattern was\n"
      "reported after ~2B tokens; variance and loss are the robust signals.\n");
}

}  // namespace depthlab::cli

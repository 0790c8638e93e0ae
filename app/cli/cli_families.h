// `depthlab-cli report --families --runs ...`: the family table of imported models (and trained
// runs) by lazy and effective layers, printed, or written as CSV / LaTeX with the per-layer
// profiles a figure draws against relative depth. The table itself is experiment::FamilyTable.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli_common.h"

namespace depthlab::cli {

struct FamilyOutput {
  double pruneShare = 0.01;  // --prune-share: lazy by pruning below this share of the probe loss
  std::string csv, latex, profiles;  // files to write ("" : none)
};

/// Prints (or, with --json, emits) the family table of `runIds`; writes the files asked for.
void reportFamilies(store::RunStore& store, const GlobalOptions& g,
                    const std::vector<int64_t>& runIds, const FamilyOutput& out);

}  // namespace depthlab::cli

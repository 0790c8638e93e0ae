// `depthlab-cli report --study --group G` (or --runs ...): the depth study of a launch such as
// `train --scheme all-depth-fixes`, every scheme in one table ranked by validation loss (mean
// [min, max] over seeds) and by deep-layer usefulness (last-layer variance, the pruning loss of
// the deepest quarter of layers, effective layers by E_l), with what each scheme lacks and the
// command that measures it; --json for machines. The study itself is analysis::DepthStudy.
#pragma once

#include <climits>
#include <cstdint>
#include <vector>

#include "cli_common.h"

namespace depthlab::cli {

/// Prints (or, with --json, emits) the study of `runIds`, each run read at `atStep`.
void reportStudy(store::RunStore& store, const GlobalOptions& g, const std::vector<int64_t>& runIds,
                 int64_t atStep = INT64_MAX);

}  // namespace depthlab::cli

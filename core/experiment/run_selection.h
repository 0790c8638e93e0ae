// Which stored runs a command means: the text a researcher types after --runs, resolved
// against the store. "3,4,7" (ids), "5-8" (a range), "all", and "group:NAME" (every run of a
// paired group, as train names it: "group:cpu-demo 2"), mixed freely ("1,group:sweep 3,9-10").
// Shared by depthlab-cli (report, ...) and depthlab-export. Does not check that the ids exist
// (the commands say so for the ids they read); a group with no runs is an error naming the
// groups there are. Items are split at commas; a group whose name holds commas is still named
// whole ("group:lr 1e-3, wd 0.1,7": the longest text after "group:" that names a group).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/run_store.h"

namespace depthlab::experiment {

/// The run ids `text` names, in the order given, each once. Throws std::invalid_argument with
/// a message for the user ("--runs: 'x' is not a run id (expected ...)").
std::vector<int64_t> resolveRunSelection(const std::string& text, store::RunStore& store);

}  // namespace depthlab::experiment

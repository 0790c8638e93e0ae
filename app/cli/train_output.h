// What `train` and `resume` print, as text: the live progress line, the cost lines said before
// the first update (experiment/run_cost), the summary table at the end and its --json form.
// A run with no update yet shows "-" for its train loss (not the 0.0000 of a loss never
// measured). Builds strings only: cli_train.cpp writes them and owns the options.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "experiment/run_group.h"

namespace depthlab::cli {

/// "3.2145", or "-" while the member has trained no update.
std::string trainLossText(const experiment::MemberProgress& m);
/// "step 12/600 | pre_ln 3.2145 6400 tok/s | lns - 0 tok/s | ETA 0:01:20" (not padded).
std::string progressLine(const experiment::GroupProgress& p);
/// "cost   20,000 updates x ..." or "cost   WARNING: ..." (no newline).
std::string costLine(const std::string& line, bool warning);
/// The summary: "group NAME (12.3 s, ...)" then a table row per run.
std::string summaryText(const experiment::GroupResult& r);
/// The summary for --json (loss_train null for a run with no update).
nlohmann::json summaryJson(const experiment::GroupResult& r);

}  // namespace depthlab::cli

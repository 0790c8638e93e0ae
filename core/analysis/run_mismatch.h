// Whether runs may be compared: before Compare draws a depth trend or an LNS gain across runs,
// the runs must share what sets their loss scale -- corpus, tokenizer, sequence length and
// training length. This file finds the runs that differ in those and says so in words ("runs
// 3 and 5 differ in sequence length: 128 vs 256"). Pure functions over the runs' stored
// configs; imported models (not trained here) and runs whose config does not parse are left
// out. It does not decide what a view draws; the view shows the warning before the trend.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/store_types.h"

namespace depthlab::analysis {

/// One setting the trained runs do not share.
struct RunMismatch {
  std::string key;                  // config key, e.g. "model.seqLen"
  std::string label;                // in words, e.g. "sequence length"
  std::vector<int64_t> runIds;      // the trained runs compared, in the order given
  std::vector<std::string> values;  // each one's value, as the message prints it
  /// "runs 3 and 5 differ in sequence length: 128 vs 256"; where a value is shared by several
  /// runs, each value names its runs: "runs 1, 2, 3 and 4 differ in ...: 64 (runs 1, 2) vs 32
  /// (runs 3, 4)".
  std::string message() const;
};

/// The settings (corpus, tokenizer, sequence length, steps) that differ among the trained
/// runs of `runs`, in that order; empty when they share all four (or fewer than two are
/// trained runs with a readable config).
std::vector<RunMismatch> runMismatches(const std::vector<store::RunInfo>& runs);
/// The messages of runMismatches joined by "; ", "" when there are none.
std::string mismatchWarning(const std::vector<store::RunInfo>& runs);

}  // namespace depthlab::analysis

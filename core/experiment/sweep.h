// Sweeps: lists of values for depth, width, learning rate and seed expand into a grid of
// paired groups (every scheme of the base config in each group). No torch here.
#pragma once

#include <string>
#include <vector>

#include "experiment/experiment_config.h"

namespace depthlab::experiment {

struct SweepSpec {
  std::vector<int> depths;     // empty = the base config's
  std::vector<int> widths;     // FFN follows as round(8/3 * width) to a multiple of 4
  std::vector<double> lrs;
  int seeds = 1;               // seeds base, base+1, ...
};

/// Parses "12, 24, 48" (ints) or "1e-3,3e-3" (doubles); throws ConfigError naming `field`.
std::vector<int> parseIntList(const std::string& text, const std::string& field);
std::vector<double> parseDoubleList(const std::string& text, const std::string& field);

/// The grid, depth-major; each group named "<base>-L<depth>-d<width>-lr<lr>-s<seed>" for the
/// dimensions that vary. Every config is validated (ConfigError lists the offending group).
std::vector<ExperimentConfig> expandSweep(const ExperimentConfig& base, const SweepSpec& sweep);

}  // namespace depthlab::experiment

// `depthlab-cli bench probes`: the time of each probe family on a preset's model, and the
// overhead the default cadence adds to training, as a percentage of training time.
#pragma once

#include <string>
#include <vector>

#include "experiment/experiment_config.h"

namespace depthlab::bench {

struct ProbeTiming {
  std::string name;
  double seconds = 0;   // one run of the family
  int runs = 0;         // times the default cadence runs it over the preset's training
};

struct ProbeBenchResult {
  double stepSeconds = 0;        // one optimizer update of one model
  int steps = 0;
  std::vector<ProbeTiming> probes;
  double scheduledSeconds = 0;   // all probes of the default cadence over the run
  double overheadPercent = 0;    // scheduledSeconds / (steps * stepSeconds)
  bool replayed = true;          // the cadence was replayed step by step (CPU); on a GPU it is
                                 // estimated as sum(time x runs) per family (an upper bound)
  std::string device = "cpu";
};

/// `device`: "cpu", "cuda" or "cuda:N" (the model, the update and the probes run there).
ProbeBenchResult runProbeBench(const experiment::ExperimentConfig& config, const std::string& scheme,
                               int threads, const std::string& device = "cpu");

}  // namespace depthlab::bench

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

// The run trained for real with the probes as the training loop runs them: those due during
// training beside it on the spare core, the final ones inline on every core.
struct BesideRun {
  double trainSeconds = 0;       // the updates alone (sum of their wall times)
  double heldSeconds = 0;        // the training thread held by probes (snapshots, waits)
  double contentionSeconds = 0;  // updates while a probe ran: time above the median update
                                 // (negative when the machine sped up meanwhile: noise)
  int overlappedSteps = 0;       // updates that ran while a probe did
  double finalSeconds = 0;       // the final probes, inline, every core
  double besideSeconds = 0;      // probe time on the spare core
  double overheadPercent = 0;    // (held + max(0, contention) + final) / (steps x median update)
};

struct ProbeBenchResult {
  double stepSeconds = 0;        // one optimizer update of one model
  int steps = 0;
  std::vector<ProbeTiming> probes;
  double scheduledSeconds = 0;   // all probes of the default cadence over the run, inline
  double finalInlineSeconds = 0;  // of which the final ones after the last update (the one-off
                                  // end-of-run block sweep among them), inline
  double inlinePercent = 0;      // scheduledSeconds / (steps * stepSeconds)
  bool replayed = true;          // the cadence was replayed step by step (CPU); on a GPU it is
                                 // estimated as sum(time x runs) per family (an upper bound)
  bool besideTraining = false;   // a core was spare: `beside` was measured
  BesideRun beside;
  double overheadPercent = 0;    // the loop's overhead: beside.overheadPercent, else inline
  std::string device = "cpu";
};

/// `device`: "cpu", "cuda" or "cuda:N" (the model, the update and the probes run there).
ProbeBenchResult runProbeBench(const experiment::ExperimentConfig& config, const std::string& scheme,
                               int threads, const std::string& device = "cpu");

}  // namespace depthlab::bench

// What a run will cost here, said before its first update: the tokens it reads (updates x
// global batch x sequence length), how many passes over its corpus's training split that is
// (a warning past kCorpusPassesWarning), the time the FLOP-rate estimate gives (calibrated on
// the groups that finished on this machine: experiment/resource_estimate), and the disk its
// kept checkpoints take (experiment/preflight's checkpointBytes); once the first update is
// timed, what that time makes of the whole run. Arithmetic and sentences only: the training
// loop (experiment/train_loop) writes them as run events and hands them to
// RunGroupOptions::onCost, the CLI prints them. No torch, no store, no printing here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiment/experiment_config.h"
#include "experiment/resource_estimate.h"

namespace depthlab::experiment {

/// Passes over its training split past which a run is warned about: a model that reads its
/// corpus more often than this memorises it rather than learning the language, and its
/// validation loss stops meaning what a paper's does.
inline constexpr double kCorpusPassesWarning = 4.0;

struct RunCost {
  int64_t updates = 0;            // updates still to train (all of them before the first)
  bool resumed = false;           // the run had trained before (the updates are those left)
  double sequencesPerUpdate = 0;  // the global batch: micro-batch x gradient accumulation
  int seqLen = 0;
  double tokens = 0;             // updates x sequences x seqLen, for one run
  int runs = 1;                  // models the process trains one update each in turn
  double corpusTokens = 0;       // the corpus: training and validation splits
  double trainTokens = 0;        // its training split
  double passes = 0;             // tokens / trainTokens (0 when the split is unknown)
  int64_t stepsForWarning = 0;   // the most updates that stay within kCorpusPassesWarning passes
  double seconds = 0;            // the group's, by the FLOP-rate estimate x calibration
  int calibratedOn = 0;          // finished groups the calibration comes from (0: none)
  std::string deviceKind;        // "cpu" or "cuda"
  double checkpointMinutes = 0;  // run.checkpointMinutes (0: no wall-time cadence)
  int checkpointEvery = 0;       // run.checkpointEvery (0: no step cadence)
  double checkpointBytes = 0;    // one checkpoint of each run, summed
  int checkpointsKept = 0;       // files per run at most: the last checkpointKeep, best, final
  std::string checkpointDir;     // where they go ("" = not said)
  double diskFreeBytes = -1;     // free there (< 0: unknown)
};

/// Bytes free on the file system that holds `path` (or its nearest existing folder); -1 when
/// unknown.
double freeBytesAt(const std::string& path);

/// One sentence of the cost; `warning` marks what the user should act on.
struct CostLine {
  std::string text;
  bool warning = false;
};

/// The cost of training `c` (its schemes side by side) from `startStep` on a corpus whose
/// splits hold `trainTokens` and `valTokens`.
RunCost estimateRunCost(const ExperimentConfig& c, int64_t startStep, double trainTokens,
                        double valTokens, const TimeCalibration& calibration = {});
/// True when each run reads its training split more than kCorpusPassesWarning times.
bool readsCorpusTooOften(const RunCost& cost);
/// The cost as sentences: tokens, corpus passes (and the warning), time, disk.
std::vector<CostLine> describeRunCost(const RunCost& cost);
/// "first update took 94 s: 20,000 updates ~ 21.8 days here": what the timed first step
/// (one update of each of `runs` runs) makes of `updates` of them.
std::string describeFirstStep(double seconds, int64_t updates, int runs, bool resumed = false);

/// "950", "12.3k", "1.2M", "2.6B": a count at the precision a glance needs.
std::string formatCount(double n);
/// "20,000": an integer with thousands separators.
std::string formatThousands(int64_t n);
/// formatDuration's "8 s", "2.5 min", "1.3 h"; "21.8 days" past two days, "1.5 years" past two.
std::string formatLongDuration(double seconds);
/// "1.6 GB", "350 MB": decimal units, as disks are sold.
std::string formatBytes(double bytes);

}  // namespace depthlab::experiment

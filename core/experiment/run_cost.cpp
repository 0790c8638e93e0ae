// See run_cost.h.
#include "experiment/run_cost.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "experiment/preflight.h"

namespace depthlab::experiment {

namespace {

std::string printf1(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

// "0.35", "3.2", "2,496": passes at the precision they matter.
std::string formatPasses(double passes) {
  if (passes < 1) return printf1("%.2f", passes);
  if (passes < 10) return printf1("%.1f", passes);
  return formatThousands(static_cast<int64_t>(std::llround(passes)));
}

// "0.15 s", "3.0 s", "94 s", then formatDuration's minutes: one update's time.
std::string formatStepTime(double seconds) {
  if (!(seconds >= 0)) return "?";
  if (seconds < 1) return printf1("%.2f s", seconds);
  if (seconds < 10) return printf1("%.1f s", seconds);
  if (seconds < 600) return printf1("%.0f s", seconds);
  return formatDuration(seconds);
}

std::string threshold() { return printf1("%g", kCorpusPassesWarning); }

std::string tokensLine(const RunCost& c) {
  std::string s = c.resumed ? "the " + formatThousands(c.updates) + " updates left"
                            : formatThousands(c.updates) + " updates";
  s += " x " + formatThousands(static_cast<int64_t>(c.sequencesPerUpdate)) + " sequences x " +
       formatThousands(c.seqLen) + " tokens = " + formatCount(c.tokens) + " tokens";
  if (c.runs > 1) {
    s += " a run (" + std::to_string(c.runs) + " runs: " + formatCount(c.tokens * c.runs) +
         " in all)";
  }
  return s;
}

std::string corpusLine(const RunCost& c) {
  return "corpus: " + formatCount(c.corpusTokens) + " tokens, " + formatCount(c.trainTokens) +
         " in its training split: " + formatPasses(c.passes) + " passes (epochs) over it" +
         (c.runs > 1 ? " a run" : "");
}

std::string passesWarning(const RunCost& c) {
  std::string s = (c.runs > 1 ? "each run would read" : "the run would read") +
                  std::string(" its training split ") + formatPasses(c.passes) +
                  " times, more than " + threshold() +
                  " passes: past that a model memorises its corpus rather than learning the "
                  "language, and its validation loss no longer compares with a paper's; ";
  if (c.stepsForWarning > 0) {
    s += "give a corpus of " + formatCount(c.tokens / kCorpusPassesWarning) +
         " tokens or more, or train at most " + formatThousands(c.stepsForWarning) + " updates (" +
         threshold() + " passes)";
  } else {
    s += "even one update reads more than that: give a much larger corpus";
  }
  return s;
}

std::string timeLine(const RunCost& c) {
  std::string s =
      "time: about " + formatLongDuration(c.seconds) + " here by the FLOP-rate estimate (";
  if (c.calibratedOn > 0) {
    s += "calibrated on " + std::to_string(c.calibratedOn) + " finished " + c.deviceKind +
         " group(s) of this database)";
  } else {
    s += "uncalibrated: no " + c.deviceKind +
         " group has finished in this database yet); the first update's time follows";
  }
  return s;
}

std::string cadence(const RunCost& c) {
  std::string s;
  if (c.checkpointMinutes > 0) s = "every " + formatDuration(c.checkpointMinutes * 60);
  if (c.checkpointEvery > 0) {
    s += (s.empty() ? "every " : " and every ") + formatThousands(c.checkpointEvery) + " updates";
  }
  return s.empty() ? "at the end only" : s + " and at the end";
}

std::string diskLine(const RunCost& c, double need) {
  std::string s = "checkpoints " + cadence(c) + ": " +
                  formatBytes(c.checkpointBytes / std::max(1, c.runs)) + " each, up to " +
                  std::to_string(c.checkpointsKept) + " kept" + (c.runs > 1 ? " a run" : "") +
                  " (the last " + std::to_string(std::max(0, c.checkpointsKept - 2)) +
                  ", the best, the final): about " + formatBytes(need);
  if (!c.checkpointDir.empty()) s += " in " + c.checkpointDir;
  if (c.diskFreeBytes >= 0) s += " (" + formatBytes(c.diskFreeBytes) + " free there)";
  return s;
}

}  // namespace

RunCost estimateRunCost(const ExperimentConfig& c, int64_t startStep, double trainTokens,
                        double valTokens, const TimeCalibration& calibration) {
  RunCost r;
  r.updates = std::max<int64_t>(0, c.optim.steps - startStep);
  r.resumed = startStep > 0;
  r.sequencesPerUpdate = static_cast<double>(c.optim.batchSize) * c.optim.gradAccum;
  r.seqLen = c.model.seqLen;
  r.tokens = static_cast<double>(r.updates) * r.sequencesPerUpdate * r.seqLen;
  r.runs = std::max<int>(1, static_cast<int>(c.schemes.size()));
  r.trainTokens = std::max(0.0, trainTokens);
  r.corpusTokens = r.trainTokens + std::max(0.0, valTokens);
  r.passes = r.trainTokens > 0 ? r.tokens / r.trainTokens : 0;
  const double perUpdate = r.sequencesPerUpdate * r.seqLen;
  r.stepsForWarning =
      perUpdate > 0
          ? static_cast<int64_t>(std::floor(kCorpusPassesWarning * r.trainTokens / perUpdate))
          : 0;
  r.deviceKind = c.run.device == "cpu" ? "cpu" : "cuda";
  r.calibratedOn = calibration.groups;
  const double share = c.optim.steps > 0 ? static_cast<double>(r.updates) / c.optim.steps : 0;
  for (const auto& scheme : c.schemes) {
    r.seconds += estimateRun(c, scheme, calibration).seconds * share / std::max(1, c.run.processes);
    r.checkpointBytes += checkpointBytes(c, scheme);
  }
  r.checkpointMinutes = c.run.checkpointMinutes;
  r.checkpointEvery = c.run.checkpointEvery;
  r.checkpointsKept = c.run.checkpointKeep + 2;
  return r;
}

bool readsCorpusTooOften(const RunCost& cost) { return cost.passes > kCorpusPassesWarning; }

std::vector<CostLine> describeRunCost(const RunCost& cost) {
  std::vector<CostLine> out;
  out.push_back({tokensLine(cost)});
  if (cost.trainTokens > 0) {
    out.push_back({corpusLine(cost)});
    if (readsCorpusTooOften(cost)) out.push_back({passesWarning(cost), true});
  }
  out.push_back({timeLine(cost)});
  const double need = cost.checkpointBytes * cost.checkpointsKept;
  out.push_back({diskLine(cost, need)});
  if (cost.diskFreeBytes >= 0 && need > cost.diskFreeBytes) {
    out.push_back(
        {"the checkpoints kept would take " + formatBytes(need) + " but " +
             (cost.checkpointDir.empty() ? std::string("their disk") : cost.checkpointDir) +
             " has " + formatBytes(cost.diskFreeBytes) +
             " free: free some space or keep fewer (run.checkpointKeep)",
         true});
  }
  return out;
}

std::string describeFirstStep(double seconds, int64_t updates, int runs, bool resumed) {
  const std::string what = runs > 1 ? "step" : "update";
  std::string s =
      "first " + what + (resumed ? " after resuming" : "") + " took " + formatStepTime(seconds);
  if (runs > 1) s += " (one update of each of the " + std::to_string(runs) + " runs)";
  s += ": " + std::string(resumed ? "the " : "") + formatThousands(updates) + " " + what + "s" +
       (resumed ? " left" : "") + " ~ " +
       formatLongDuration(seconds * static_cast<double>(updates)) +
       " here (evaluations and probes besides)";
  return s;
}

double freeBytesAt(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  while (!p.empty() && !fs::exists(p, ec)) {
    if (p == p.parent_path()) return -1;
    p = p.parent_path();
  }
  if (p.empty()) return -1;
  const auto space = fs::space(p, ec);
  return ec ? -1 : static_cast<double>(space.available);
}

std::string formatCount(double n) {
  if (!(n >= 0)) return "?";
  if (n < 1e3) return printf1("%.0f", n);
  if (n < 1e6) return printf1("%.1fk", n / 1e3);
  if (n < 1e9) return printf1("%.1fM", n / 1e6);
  if (n < 1e12) return printf1("%.1fB", n / 1e9);
  return printf1("%.1fT", n / 1e12);
}

std::string formatThousands(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string formatLongDuration(double seconds) {
  constexpr double kDay = 86400;
  if (!(seconds >= 0) || seconds < 2 * kDay) return formatDuration(seconds);
  if (seconds < 730 * kDay) return printf1("%.1f days", seconds / kDay);
  return printf1("%.1f years", seconds / (365.25 * kDay));
}

std::string formatBytes(double bytes) {
  if (!(bytes >= 0)) return "?";
  if (bytes >= 1e12) return printf1("%.1f TB", bytes / 1e12);
  if (bytes >= 1e9) return printf1("%.1f GB", bytes / 1e9);
  if (bytes >= 1e6) return printf1("%.0f MB", bytes / 1e6);
  return printf1("%.0f kB", std::max(1.0, bytes / 1e3));
}

}  // namespace depthlab::experiment

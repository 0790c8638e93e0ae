// See resource_estimate.h.
#include "experiment/resource_estimate.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "data/tokenizer.h"
#include "experiment/presets.h"
#include "experiment/run_config.h"
#include "train/row_split_policy.h"

#include <algorithm>
#include <map>
#include <thread>

namespace depthlab::experiment {

RunEstimate estimateRun(const ExperimentConfig& c, const std::string& scheme,
                        const TimeCalibration& calibration) {
  RunEstimate e;
  auto m = c.model;
  if (c.data.tokenizer == "byte") m.vocabSize = data::kByteVocab;
  e.params = parameterCount(m, scheme, c.options);
  const double B = c.optim.batchSize, T = m.seqLen, C = m.dModel, L = m.nLayers, F = m.dFF;
  const double HD = static_cast<double>(m.nHeads) * m.headDimension();  // attention's width
  // Weights + grads + Adam moments (fp32), plus activations kept for backward (~per block:
  // 12 C-wide tensors (q/k/v/o at the heads' width), 3 F-wide, attention scores) and the logits.
  const double activations = B * T * (L * (8 * C + 4 * HD + 3 * F) + 2 * m.vocabSize) +
                             B * L * m.nHeads * T * T * 2;
  // The probes: a forward pass over the probe batch without gradients, every block's output
  // kept (angular distances, pruning), one block's attention scores at a time, the logits.
  const double P = c.probes.probeBatch;
  const double probes = P * T * (L * 2 * C + 6 * C + 2 * HD + 2 * F + 2 * m.vocabSize) +
                        P * m.nHeads * T * T * 2;
  // On the CPU the probes due during training may run beside it over a float32 copy of the
  // weights (experiment/background_probes).
  const double perParam = 16.0 + (c.run.device == "cpu" && c.probes.besideTraining ? 4.0 : 0.0);
  // With more than one thread on the CPU the row split keeps a gradient copy per extra thread.
  const int threads = c.run.threads > 0 ? c.run.threads
                                         : static_cast<int>(std::thread::hardware_concurrency());
  const double rowSplit = c.run.device == "cpu"
                              ? train::rowSplitExtraBytes(std::max(1, threads), c.optim.batchSize,
                                                          4.0 * static_cast<double>(e.params))
                              : 0.0;
  e.parameterMB = (perParam * static_cast<double>(e.params) + rowSplit) / 1e6;
  e.activationMB = 4.0 * activations / 1e6;
  e.probeMB = 4.0 * probes / 1e6;
  e.memoryMB = e.parameterMB + e.activationMB + e.probeMB;
  // ~6 flops per parameter per token plus attention; on this 2-core machine one LibTorch
  // thread sustains about 45 GFLOP/s for these shapes (cpu-demo: 600 steps in ~95 s).
  const double tokens = B * T * c.optim.gradAccum * c.optim.steps;
  const double flops = tokens * trainingFlopsPerToken(c, scheme);
  e.seconds = flops / (c.run.device == "cpu" ? 45e9 : 5e12) * calibration.factor;
  return e;
}

double trainingFlopsPerToken(const ExperimentConfig& c, const std::string& scheme) {
  auto m = c.model;
  if (c.data.tokenizer == "byte") m.vocabSize = data::kByteVocab;
  const double params = static_cast<double>(parameterCount(m, scheme, c.options));
  return 6.0 * params + 12.0 * m.nLayers * static_cast<double>(m.seqLen) * m.dModel;
}

double h200Seconds(const ExperimentConfig& c, const std::string& scheme) {
  static const double flopsPerSecond = [] {
    const ExperimentConfig measured = requirePreset("llama-130m");  // T5's 32k vocabulary
    return kH200TokensPerSecond130M * trainingFlopsPerToken(measured, "pre_ln");
  }();
  const double tokens = static_cast<double>(c.optim.batchSize) * c.optim.gradAccum *
                        c.model.seqLen * static_cast<double>(c.optim.steps);
  return tokens * trainingFlopsPerToken(c, scheme) / flopsPerSecond;
}

TimeCalibration calibrateTime(const std::vector<store::RunInfo>& runs, const std::string& deviceKind,
                              int newestGroups) {
  struct Group {
    double measured = 0, estimate = 0;
    bool complete = true;
    int64_t newestId = 0;
  };
  std::map<std::string, Group> groups;
  for (const auto& r : runs) {
    if (r.groupName.empty()) continue;
    auto& g = groups[r.groupName];
    g.newestId = std::max(g.newestId, r.id);
    const auto c = tryConfigOf(r);
    const bool sameKind = c && (deviceKind == "cpu" ? c->run.device == "cpu" : c->run.device != "cpu");
    if (!c || !sameKind || r.status != store::RunStatus::Finished || !r.startedAt || !r.finishedAt) {
      g.complete = false;
      continue;
    }
    // A group's runs train side by side in one process: its time is its longest run's (less
    // the pauses of a run stopped and resumed, or trained further later).
    g.measured = std::max(g.measured, store::trainingSeconds(r).value_or(0.0));
    g.estimate += estimateRun(*c, r.scheme).seconds;
  }
  std::vector<std::pair<int64_t, double>> ratios;  // (newest run id, measured / estimate)
  for (const auto& [name, g] : groups) {
    if (g.complete && g.estimate > 0 && g.measured > 0.5)
      ratios.emplace_back(g.newestId, g.measured / g.estimate);
  }
  std::sort(ratios.begin(), ratios.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  if (static_cast<int>(ratios.size()) > newestGroups) ratios.resize(static_cast<size_t>(newestGroups));
  TimeCalibration cal;
  if (ratios.empty()) return cal;
  std::vector<double> f;
  for (const auto& r : ratios) f.push_back(r.second);
  std::sort(f.begin(), f.end());
  const size_t n = f.size();
  cal.factor = n % 2 ? f[n / 2] : 0.5 * (f[n / 2 - 1] + f[n / 2]);
  cal.groups = static_cast<int>(n);
  return cal;
}

std::string formatDuration(double seconds) {
  char buf[32];
  if (!(seconds >= 0)) return "?";
  if (seconds < 60) std::snprintf(buf, sizeof(buf), "%.0f s", std::max(1.0, seconds));
  else if (seconds < 3600) std::snprintf(buf, sizeof(buf), "%.1f min", seconds / 60);
  else std::snprintf(buf, sizeof(buf), "%.1f h", seconds / 3600);
  return buf;
}

double availableMemoryMB() {
  std::ifstream f("/proc/meminfo");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream in(line.substr(13));
      double kb = 0;
      in >> kb;
      return kb / 1024.0;
    }
  }
  return 0;
}

namespace {

// The fields behind the largest part of an estimate, for the refusal's advice.
std::string largestPart(const ExperimentConfig& c, double parameters, double activations,
                        double probes) {
  char buf[256];
  if (probes >= parameters && probes >= activations) {
    std::snprintf(buf, sizeof(buf),
                  "the largest part, %.0f MB, is the probes' pass over probes.probeBatch = %d "
                  "sequences: use a smaller probes.probeBatch",
                  probes, c.probes.probeBatch);
  } else if (activations >= parameters) {
    std::snprintf(buf, sizeof(buf),
                  "the largest part, %.0f MB, is a micro-batch's activations (optim.batchSize = "
                  "%d x model.seqLen = %d): use a smaller optim.batchSize (--micro-batch) or "
                  "model.seqLen",
                  activations, c.optim.batchSize, c.model.seqLen);
  } else {
    std::snprintf(buf, sizeof(buf),
                  "the largest part, %.0f MB, is the parameters with their gradients and Adam "
                  "moments (model.dModel = %d, model.nLayers = %d, model.dFF = %d, model.headDim "
                  "= %d): use a smaller width, depth, FFN or head dimension",
                  parameters, c.model.dModel, c.model.nLayers, c.model.dFF,
                  c.model.headDimension());
  }
  return buf;
}

}  // namespace

void requireFits(const ExperimentConfig& c, double availableMB, const std::string& where) {
  if (availableMB <= 0) return;
  // The group's models live side by side; activations are those of one model at a time, but
  // the estimate keeps them all (a margin for the allocator and the probes).
  double total = 0, parameters = 0, activations = 0, probes = 0;
  for (const auto& s : c.schemes) {
    const auto e = estimateRun(c, s);
    total += e.memoryMB;
    parameters += e.parameterMB;
    activations += e.activationMB;
    probes += e.probeMB;
  }
  if (total > availableMB) {
    char buf[320];
    std::snprintf(buf, sizeof(buf),
                  "this group needs about %.0f MB (%zu model(s) of %.1fM parameters: weights, "
                  "gradients, Adam moments, activations and probes) but %s has %.0f MB "
                  "available; ",
                  total, c.schemes.size(),
                  static_cast<double>(estimateRun(c, c.schemes.front()).params) / 1e6,
                  where.c_str(), availableMB);
    throw ConfigError(buf + largestPart(c, parameters, activations, probes));
  }
}

}  // namespace depthlab::experiment

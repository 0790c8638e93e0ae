// probeImportedDecoder (model_analysis.h): the probe families on an imported model's decoder,
// with a progress line that estimates the time left from each family's relative cost.
// Does not: load the model or its text (model_analysis.cpp does).
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <map>

#include "experiment/analyze.h"
#include "experiment/probe_schedule.h"
#include "hf/hf_import.h"
#include "hf/model_analysis.h"

namespace depthlab::hf {

namespace {

using Clock = std::chrono::steady_clock;

std::string minutes(double s) {
  char buf[32];
  if (s < 60)
    std::snprintf(buf, sizeof(buf), "%.0f s", s);
  else
    std::snprintf(buf, sizeof(buf), "%dm %02ds", static_cast<int>(s) / 60,
                  static_cast<int>(s) % 60);
  return buf;
}

/// Relative cost of each probe family, in parameters touched per token (for the ETA).
std::map<std::string, double> familyCosts(const model::ModelConfig& m, int jacobianSamples) {
  const double C = m.dModel, D = m.headDimension(), F = m.dFF;
  const double block = C * D * (2.0 * m.nHeads + 2.0 * m.kvHeads()) + 3.0 * C * F;
  const double head = static_cast<double>(m.vocabSize) * C;
  const double L = m.nLayers;
  const double forward = L * block + head;
  // The forward probes run twice: on all tokens and on the last token of each sequence.
  return {{"variance", 2 * forward},
          {"lens", L * head},  // the head at every block, on the forward pass's trace
          {"pruning", forward + block * L * (L - 1) / 2 + head * L},
          {"skip_effect", forward + block * L * (L - 1) / 2},  // the later blocks, no head
          {"block_pruning", forward + block * (L * L * L - L) / 6 + head * L * (L + 1) / 2},
          {"jacobian", forward + 3.0 * jacobianSamples * L * block},
          {"spectra", 40.0 * L * block}};  // SVDs: ~ min(N, M) x N x M each, no tokens
}

}  // namespace

size_t probeImportedDecoder(model::Decoder& decoder, const model::ModelConfig& model,
                            const ImportedProbeBatch& batch, int64_t step,
                            std::set<std::string> which,
                            const std::function<void(const std::string&)>& progress,
                            store::WriteBatch& out) {
  if (which.empty()) which = {experiment::kProbeNames.begin(), experiment::kProbeNames.end()};
  if (which.count(experiment::kTunedLensFamily)) {
    throw HfModelError(
        "the tuned lens trains on demand, on one model: `depthlab-cli analyze --run "
        "ID --probes tuned_lens` (not with a checkpoint series)");
  }
  probes::ProbeConfig pc;
  pc.probeBatch = batch.sequences;
  pc.pruneSequences = 0;  // every sequence asked for, whatever the default
  pc.lastTokenToo = true;
  experiment::ProbeSchedule schedule(pc, batch.inputs, batch.targets);
  auto costs = familyCosts(model, pc.jacobianSamples);
  // With the block sweep, the single-layer sweep is its first column (no evaluations of its own).
  if (which.count("block_pruning")) costs["pruning"] = 0;
  // The lens alone runs the forward pass itself (with the variance probes it shares theirs).
  if (which.count("lens") && !which.count("variance") && !which.count("angular")) {
    costs["lens"] += costs.at("variance") / 2;
  }
  double total = 0;
  for (const auto& f : which) total += costs.at(f == "angular" ? "variance" : f);
  if (which.count("angular") && which.count("variance")) total -= costs.at("variance");
  double finished = 0;  // cost of the families already done
  auto lastSaid = Clock::now() - std::chrono::seconds(10);
  const auto probeStart = Clock::now();
  schedule.setProgress([&](const std::string& family, int done, int totalEvals) {
    const double cost = costs.at(family);
    const double doneCost = finished + cost * done / std::max(1, totalEvals);
    if (done == totalEvals) finished += cost;
    const auto now = Clock::now();
    if (!progress || (done != totalEvals && now - lastSaid < std::chrono::seconds(2))) return;
    lastSaid = now;
    const double elapsed = std::chrono::duration<double>(now - probeStart).count();
    const double eta = doneCost > 0 ? elapsed * (total - doneCost) / doneCost : 0;
    char buf[160];
    std::snprintf(buf, sizeof(buf), "%-14s %4d/%-4d  %3.0f%% of the probes  %s elapsed  ETA %s",
                  family.c_str(), done, totalEvals, 100.0 * std::min(1.0, doneCost / total),
                  minutes(elapsed).c_str(), minutes(std::max(0.0, eta)).c_str());
    progress(buf);
  });
  const size_t before = out.valueCount();
  schedule.run(decoder, step, which, out);
  return out.valueCount() - before;
}

}  // namespace depthlab::hf

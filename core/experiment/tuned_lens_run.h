// The tuned lens as a probe family ("tuned_lens", on demand: `analyze --probes tuned_lens`,
// never at a training cadence and not in "all"): trains the lens on held-out text from the
// identity (probes/tuned_lens.h), or reuses the one already kept for the same step and training
// length when its hash still matches, keeps it in the run's folder as
// tuned-lens-step-<S>-<steps>x<rows>.pt (+ .fnv1a), and writes tuned_kl, tuned_top1,
// tuned_entropy, tuned_ce per block and tuned_settle, measured on the probe batch, with an event
// naming the file and its hash.
// Does not: pick the text or the folder (analyze.cpp, hf/model_analysis.cpp do).
// Legend: R text rows, B probe rows, T sequence length.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <string>

#include "experiment/analyze.h"  // kTunedLensFamily
#include "model/decoder.h"
#include "store/store_types.h"

namespace depthlab::experiment {

struct TunedLensJob {
  torch::Tensor text;                           // (R, T) int64 held-out rows the lens trains on
  std::string folder;                           // where the lens file goes (created when missing)
  int steps = 250;                              // training steps (the tuned-lens package's default)
  int rowsPerStep = 8;                          // rows of `text` a step
  std::function<void(const std::string&)> say;  // progress lines (optional)
};

/// Runs the family for `model` at `step`: the lens trained (or reused) per `job`, its statistics
/// on inputs/targets (B, T) appended to `out`. Returns the lens file's path.
std::string runTunedLens(model::Decoder& model, const torch::Tensor& inputs,
                         const torch::Tensor& targets, int64_t step, const TunedLensJob& job,
                         store::WriteBatch& out);

}  // namespace depthlab::experiment

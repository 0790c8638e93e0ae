// Depth probes; see depth_probes.h.
#include "probes/depth_probes.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "probes/eval_scope.h"
#include "probes/head_loss.h"
#include "probes/probe_math.h"
#include "probes/probe_tokens.h"
#include "probes/saturation_probe.h"
#include "probes/trace_stats.h"
#include "probes/traced_forward.h"
#include "train/thread_share.h"

namespace depthlab::probes {

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

}  // namespace

ForwardProbes runForwardProbes(model::Decoder& model, const torch::Tensor& inputs,
                               const torch::Tensor& targets, const ForwardProbeOptions& o) {
  torch::NoGradGuard ng;
  EvalScope scope(model);
  model::ForwardTrace trace;
  trace.detailed = o.outliers;  // the sublayers' branches and the attention statistics
  auto logits = tracedForward(model, inputs, trace);
  const auto real = realTokens(targets);  // undefined: no pads
  ForwardProbes r = statsOfTraceMasked(trace, real, o);
  r.probeLoss = lossOf(logits, targets);
  r.saturation = dytSaturation(model, trace, real);
  r.saturationFinal = dytFinalSaturation(model, trace, real);
  if (o.logitLens) r.lens = logitLensOfTrace(model, trace, targets);
  return r;
}

namespace {

// Scale overrides for a pruned depth-scaled model whose survivors are renumbered.
std::vector<double> renumberedScales(model::Decoder& model, const std::vector<bool>& skip) {
  std::vector<double> out;
  int position = 0;
  for (int l = 0; l < model->nLayers(); ++l) {
    const auto& plan = model->plans()[static_cast<size_t>(l)];
    if (!skip[static_cast<size_t>(l)]) ++position;
    out.push_back(plan.placement == model::Placement::None
                      ? plan.depthScale
                      : 1.0 / std::sqrt(static_cast<double>(std::max(position, 1))));
  }
  return out;
}

// The residual stream entering every block of the unpruned model, computed once so pruning
// evaluations start at the first removed block instead of the embedding.
struct PrefixCache {
  std::vector<torch::Tensor> inputs;  // L+1 entries
  torch::Tensor fullLosses;           // (B) per sequence, on the model's device
  torch::Tensor counted;              // (B) targets that count per sequence; undefined: all
  std::optional<ChunkedHead> head;    // the losses without (B, T, V) logits, when it applies
};

PrefixCache prefix(model::Decoder& model, const torch::Tensor& inputs,
                   const torch::Tensor& targets) {
  model::ForwardTrace trace;
  PrefixCache c;
  c.counted = countedTargets(targets);
  c.fullLosses = sequenceLosses(tracedForward(model, inputs, trace), targets, c.counted);
  c.inputs = std::move(trace.blockInputs);
  c.head = chunkedHeadFor(model, c.inputs.front(), targets, c.counted, c.fullLosses);
  return c;
}

// (B) the per-sequence losses with the blocks in `skip` removed, left on the device.
torch::Tensor prunedLoss(model::Decoder& model, const PrefixCache& cache,
                         const torch::Tensor& targets, const std::vector<bool>& skip,
                         bool renumber) {
  int first = 0;
  while (first < model->nLayers() && !skip[static_cast<size_t>(first)]) ++first;
  model::ForwardOptions opts;
  opts.skip = skip;
  if (renumber) opts.scaleOverride = renumberedScales(model, skip);
  if (first == model->nLayers()) return cache.fullLosses;
  if (cache.head) {
    return cache.head->losses(model, cache.inputs[static_cast<size_t>(first)], first, opts, targets,
                              cache.counted);
  }
  return sequenceLosses(model->forwardFrom(cache.inputs[static_cast<size_t>(first)], first, opts),
                        targets, cache.counted);
}

// (B) the per-sequence losses of each skip set, in order, left on the device. On the CPU the
// evaluations are shared out over as many threads as the caller has intra-op threads, each
// running whole forward passes single-threaded (train/thread_share.h); elsewhere in turn.
// `progress` hears (done, total) from the calling thread only.
std::vector<torch::Tensor> prunedLosses(model::Decoder& model, const PrefixCache& cache,
                                        const torch::Tensor& targets,
                                        const std::vector<std::vector<bool>>& skips, bool renumber,
                                        const EvaluationProgress& progress) {
  const int64_t total = static_cast<int64_t>(skips.size());
  std::vector<torch::Tensor> losses(skips.size());
  const int workers = targets.device().is_cpu() ? at::get_num_threads() : 1;
  // Handed out the costliest first (cost: the blocks a pass runs), each worker taking the next
  // one when it is free: a worker slowed by another process on its core takes fewer, and the
  // cheap passes at the end even out the finish.
  std::vector<std::pair<int, size_t>> byCost;
  for (size_t i = 0; i < skips.size(); ++i) {
    int first = 0, runs = 0;
    while (first < model->nLayers() && !skips[i][static_cast<size_t>(first)]) ++first;
    for (int k = first; k < model->nLayers(); ++k) runs += skips[i][static_cast<size_t>(k)] ? 0 : 1;
    byCost.emplace_back(workers > 1 ? -runs : 0, i);
  }
  std::stable_sort(byCost.begin(), byCost.end());
  std::atomic<int> done{0};
  std::atomic<size_t> next{0};
  train::runSideBySide(workers, [&](int worker) {
    for (size_t k = next++; k < byCost.size(); k = next++) {
      const size_t i = byCost[k].second;
      losses[i] = prunedLoss(model, cache, targets, skips[i], renumber);
      const int now = ++done;
      if (progress && worker == 0) progress(now, static_cast<int>(total));
    }
  });
  if (progress && workers > 1) progress(static_cast<int>(total), static_cast<int>(total));
  return losses;
}

}  // namespace

double lossWithout(model::Decoder& model, const torch::Tensor& inputs, const torch::Tensor& targets,
                   const std::vector<bool>& skip, bool renumber) {
  torch::NoGradGuard ng;
  EvalScope scope(model);
  model::ForwardOptions opts;
  opts.skip = skip;
  if (renumber) opts.scaleOverride = renumberedScales(model, skip);
  return lossOf(model->forward(inputs, opts), targets);
}

// Deltas and standard errors from the host copy of (1 + E, B) per-sequence losses: row 0 the
// full model's, row 1 + e evaluation e's.
std::vector<MeanAndError> pairedDeltas(const std::vector<double>& losses, int64_t sequences) {
  std::vector<MeanAndError> out;
  const double* full = losses.data();
  for (size_t row = static_cast<size_t>(sequences); row < losses.size();
       row += static_cast<size_t>(sequences)) {
    out.push_back(pairedDifference(losses.data() + row, full, sequences));
  }
  return out;
}

PruningSweep singleLayerPruning(model::Decoder& model, const torch::Tensor& inputs,
                                const torch::Tensor& targets, bool renumber,
                                const EvaluationProgress& progress) {
  torch::NoGradGuard ng;
  EvalScope scope(model);
  const int L = model->nLayers();
  const auto cache = prefix(model, inputs, targets);
  std::vector<bool> none(static_cast<size_t>(L), false);
  std::vector<std::vector<bool>> skips;  // block l removed
  for (int l = 0; l < L; ++l) {
    skips.push_back(none);
    skips.back()[static_cast<size_t>(l)] = true;
  }
  std::vector<torch::Tensor> losses = {cache.fullLosses};  // full, then block l removed
  for (auto& t : prunedLosses(model, cache, targets, skips, renumber, progress))
    losses.push_back(t);
  PruningSweep r;
  for (const auto& d : pairedDeltas(hostValues(losses), targets.size(0))) {
    r.delta.push_back(static_cast<float>(d.mean));
    r.standardError.push_back(static_cast<float>(d.standardError));
  }
  return r;
}

BlockPruning blockPruning(model::Decoder& model, const torch::Tensor& inputs,
                          const torch::Tensor& targets, const std::vector<float>& angular,
                          bool renumber, const EvaluationProgress& progress) {
  torch::NoGradGuard ng;
  EvalScope scope(model);
  const int L = model->nLayers();
  const auto cache = prefix(model, inputs, targets);
  std::vector<bool> none(static_cast<size_t>(L), false);
  BlockPruning r;
  r.delta.assign(static_cast<size_t>(L) * L, kNaN);
  r.standardError.assign(static_cast<size_t>(L) * L, kNaN);
  r.bestStart.assign(static_cast<size_t>(L), kNaN);
  std::vector<std::vector<bool>> skips;  // (l, n) row by row: blocks l..l+n-1 removed
  for (int l = 0; l < L; ++l) {
    for (int n = 1; l + n <= L; ++n) {
      skips.push_back(none);
      for (int k = l; k < l + n; ++k) skips.back()[static_cast<size_t>(k)] = true;
    }
  }
  std::vector<torch::Tensor> losses = {cache.fullLosses};  // full, then (l, n) row by row
  for (auto& t : prunedLosses(model, cache, targets, skips, renumber, progress))
    losses.push_back(t);
  const auto deltas = pairedDeltas(hostValues(losses), targets.size(0));
  size_t k = 0;
  for (int l = 0; l < L; ++l) {
    for (int n = 1; l + n <= L; ++n, ++k) {
      r.delta[static_cast<size_t>(l) * L + (n - 1)] = static_cast<float>(deltas[k].mean);
      r.standardError[static_cast<size_t>(l) * L + (n - 1)] =
          static_cast<float>(deltas[k].standardError);
    }
  }
  if (angular.size() == static_cast<size_t>(L) * L) {
    for (int n = 1; n <= L; ++n) {
      float best = std::numeric_limits<float>::infinity();
      for (int l = 0; l + n <= L; ++l) {
        const float d = angular[static_cast<size_t>(l) * L + (n - 1)];
        if (d < best) {
          best = d;
          r.bestStart[static_cast<size_t>(n - 1)] = static_cast<float>(l);
        }
      }
    }
  }
  return r;
}

std::vector<float> jacobianToIdentity(model::Decoder& model, const torch::Tensor& inputs,
                                      int samples, uint64_t seed, const torch::Tensor& targets) {
  EvalScope scope(model);
  // Pads get no probe direction (u = 0 there): nothing flows from or to them.
  const auto real = targets.defined() ? realTokens(targets) : torch::Tensor();
  model::ForwardTrace trace;
  {
    torch::NoGradGuard ng;
    model->forward(inputs, {}, &trace);
  }
  // A private generator: the probes must not advance torch's global RNG.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  std::vector<torch::Tensor> sums;  // (L) of () on the device, read once at the end
  for (int l = 0; l < model->nLayers(); ++l) {
    auto x = trace.blockInputs[static_cast<size_t>(l)].detach().clone().requires_grad_(true);
    // The block as the model runs it: its own rotary tables (scaled as the config says; Gemma
    // 3's local layers their own base), not a default RoPE of the config's base.
    auto y = model->block(l)->forward(x, model->rope(l));
    torch::Tensor sum;
    for (int s = 0; s < samples; ++s) {
      // Drawn on the CPU from the private generator: the same vectors on every device.
      auto u = torch::randn(x.sizes(), gen, torch::TensorOptions().dtype(torch::kFloat32))
                   .to(x.device());
      if (real.defined()) u = u * real.unsqueeze(-1).to(u.options());
      u = u / u.norm();
      auto vjp = torch::autograd::grad({y}, {x}, {u}, /*retain_graph=*/true)[0];
      auto d = (vjp - u).norm().to(torch::kFloat64).detach();
      sum = sum.defined() ? sum + d : d;
    }
    sums.push_back(sum.defined() ? sum : torch::zeros({}, x.options().dtype(torch::kFloat64)));
  }
  std::vector<float> out;
  for (double v : hostValues(sums)) out.push_back(static_cast<float>(v / samples));
  return out;
}

}  // namespace depthlab::probes

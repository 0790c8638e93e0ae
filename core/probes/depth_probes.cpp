// Depth probes; see depth_probes.h.
#include "probes/depth_probes.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/cpu_kernels.h"
#include "kernels/probe_kernels.h"
#include "probes/head_loss.h"
#include "probes/probe_math.h"
#include "probes/probe_tokens.h"
#include "probes/saturation_probe.h"
#include "probes/traced_forward.h"
#include "train/thread_share.h"

namespace depthlab::probes {

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Switches to eval mode for the scope and back to whatever the model was in.
class EvalScope {
 public:
  explicit EvalScope(model::Decoder& m) : m_model(m), m_wasTraining(m->is_training()) {
    m_model->eval();
  }
  ~EvalScope() { m_model->train(m_wasTraining); }

 private:
  model::Decoder& m_model;
  bool m_wasTraining;
};

// The float64 values of n same-shaped tensors (scalars, or (B) rows), row after row, in one
// device-to-host copy.
std::vector<double> hostValues(const std::vector<torch::Tensor>& parts) {
  if (parts.empty()) return {};
  auto host = torch::stack(parts).to(torch::kCPU, torch::kFloat64).contiguous();
  return std::vector<double>(host.data_ptr<double>(), host.data_ptr<double>() + host.numel());
}

// Small device results brought to the host together: one copy (and one synchronisation on a
// GPU) for all of them, instead of one per result.
class HostBatch {
 public:
  /// Queues `t` (any shape, any device); returns its slot.
  size_t add(const torch::Tensor& t) {
    m_parts.push_back(t.detach().flatten().to(torch::kFloat64));
    return m_parts.size() - 1;
  }
  /// Copies every queued tensor to the host.
  void fetch() {
    if (m_parts.empty()) return;
    auto host = torch::cat(m_parts).to(torch::kCPU).contiguous();
    const double* p = host.data_ptr<double>();
    for (const auto& part : m_parts) {
      m_values.emplace_back(p, p + part.numel());
      p += part.numel();
    }
  }
  std::vector<float> floats(size_t slot) const {
    const auto& v = m_values.at(slot);
    return std::vector<float>(v.begin(), v.end());
  }

 private:
  std::vector<torch::Tensor> m_parts;
  std::vector<std::vector<double>> m_values;
};

// The stats from tensor operations in float64 (any device): the reference path, and the one
// GPU runs and batches with pads take (`real` (B, T): the positions that count; undefined:
// all). Everything stays on the model's device until the small results come back in one copy.
void statsFromTensors(ForwardProbes& r, const model::ForwardTrace& trace,
                      const ForwardProbeOptions& o, int L, const torch::Tensor& real) {
  HostBatch out;
  // All L+1 residual streams at once: x[l] enters block l, x[L] is the final residual.
  auto xs = torch::stack(trace.blockInputs).to(torch::kFloat64);                 // (L+1, B, T, C)
  auto flat = real.defined() ? realRows(xs, real).flatten(1) : xs.flatten(1);    // (L+1, N*C)
  const size_t variance = out.add(flat.slice(0, 1).var(1, /*unbiased=*/false));  // (L)
  auto diff2 = (flat.slice(0, 1) - flat.slice(0, 0, L)).pow(2).sum(1);           // (L)
  auto norm2 = flat.slice(0, 1).pow(2).sum(1);                                   // (L)
  const size_t effectiveness =
      out.add(torch::where(norm2 > 0, diff2 / norm2.clamp_min(1e-300), torch::zeros_like(norm2)));
  // Tokens for the angular measures: (L+1, N, C), unit length (zero vectors stay zero).
  auto tok = real.defined()    ? (o.lastTokenOnly ? lastRealRows(xs, real) : realRows(xs, real))
             : o.lastTokenOnly ? xs.select(2, xs.size(2) - 1)
                               : xs.flatten(1, 2);
  auto norms = tok.norm(2, -1, /*keepdim=*/true);  // (L+1, N, 1)
  auto unit = tok / norms.clamp_min(1e-300);
  auto zero = (norms.squeeze(-1) == 0);  // (L+1, N)
  auto distance = [&](int n) {           // (L+1-n, N)
    auto cos = (unit.slice(0, 0, L + 1 - n) * unit.slice(0, n)).sum(-1).clamp(-1.0, 1.0);
    auto d = torch::acos(cos) / M_PI;  // a zero vector has cos 0 -> 0.5
    auto bothZero = zero.slice(0, 0, L + 1 - n) & zero.slice(0, n);
    return torch::where(bothZero, torch::zeros_like(d), d);
  };
  auto adjacent = distance(1);  // (L, N)
  const size_t angular = out.add(adjacent.mean(1));
  const size_t influence = out.add(1.0 - torch::cos(adjacent * M_PI).mean(1));
  // Norm-output variances: (L) each, NaN for blocks without a pre-norm (Post-LN).
  auto normVariance = [&](bool attn) {
    std::vector<torch::Tensor> outs;
    std::vector<size_t> where;
    for (int l = 0; l < L; ++l) {
      const auto& bt = trace.blocks[static_cast<size_t>(l)];
      const auto& t = attn ? bt.attnNormOut : bt.ffnNormOut;  // (B, T, C)
      if (!t.defined()) continue;
      outs.push_back((real.defined() ? realRows(t, real) : t).flatten());
      where.push_back(static_cast<size_t>(l));
    }
    if (outs.empty()) return std::make_pair(std::vector<size_t>{}, size_t{0});
    return std::make_pair(
        where, out.add(torch::stack(outs).to(torch::kFloat64).var(1, /*unbiased=*/false)));
  };
  const auto attnVar = normVariance(true), ffnVar = normVariance(false);
  size_t matrix = 0;
  if (o.angularMatrix) {  // rows n = 1..L of (L+1-n) values each, concatenated
    std::vector<torch::Tensor> rows;
    for (int n = 1; n <= L; ++n) rows.push_back(distance(n).mean(1));
    matrix = out.add(torch::cat(rows));
  }
  out.fetch();
  r.variance = out.floats(variance);
  r.effectiveness = out.floats(effectiveness);
  r.angularAdjacent = out.floats(angular);
  r.blockInfluence = out.floats(influence);
  auto scatter = [&](const std::pair<std::vector<size_t>, size_t>& v) {
    std::vector<float> values(static_cast<size_t>(L), kNaN);
    if (v.first.empty()) return values;
    const auto got = out.floats(v.second);
    for (size_t i = 0; i < v.first.size(); ++i) values[v.first[i]] = got[i];
    return values;
  };
  r.normVarAttn = scatter(attnVar);
  r.normVarFfn = scatter(ffnVar);
  if (o.angularMatrix) {
    r.angularMatrix.assign(static_cast<size_t>(L) * L, kNaN);
    const auto all = out.floats(matrix);
    size_t k = 0;
    for (int n = 1; n <= L; ++n) {
      for (int l = 0; l + n <= L; ++l) {
        r.angularMatrix[static_cast<size_t>(l) * L + (n - 1)] = all[k++];
      }
    }
  }
}

// The same stats from the one-pass CPU kernels (kernels/probe_kernels.h), layers split across
// ATen's intra-op threads.
void statsFromKernels(ForwardProbes& r, const model::ForwardTrace& trace,
                      const ForwardProbeOptions& o, int L) {
  std::vector<torch::Tensor> streams;  // L+1 x (B, T, C) float32, contiguous
  std::vector<const float*> x;
  for (const auto& t : trace.blockInputs) {
    streams.push_back(t.to(torch::kFloat32).contiguous());
    x.push_back(streams.back().data_ptr<float>());
  }
  const int64_t B = streams[0].size(0), T = streams[0].size(1), C = streams[0].size(2);
  kernels::TokenRows rows;
  rows.first = o.lastTokenOnly ? T - 1 : 0;
  rows.step = o.lastTokenOnly ? T : 1;
  rows.count = o.lastTokenOnly ? B : B * T;
  std::vector<double> norms(static_cast<size_t>((L + 1) * rows.count));  // (L+1, tokens)
  at::parallel_for(0, L + 1, 1, [&](int64_t b, int64_t e) {
    for (int64_t l = b; l < e; ++l) {
      kernels::tokenNorms(x[static_cast<size_t>(l)], C, rows, norms.data() + l * rows.count);
    }
  });
  std::vector<kernels::AdjacentStats> stats(static_cast<size_t>(L));
  at::parallel_for(0, L, 1, [&](int64_t b, int64_t e) {
    kernels::adjacentStats(x.data(), B * T, C, rows, norms.data(), b, e, stats.data());
  });
  for (const auto& s : stats) {
    r.variance.push_back(static_cast<float>(s.variance));
    r.effectiveness.push_back(static_cast<float>(s.effectiveness));
    r.angularAdjacent.push_back(static_cast<float>(s.angular));
    r.blockInfluence.push_back(static_cast<float>(s.blockInfluence));
  }
  auto normVariance = [&](bool attn) {  // (L), NaN for blocks without a pre-norm (Post-LN)
    std::vector<float> out(static_cast<size_t>(L), kNaN);
    for (int l = 0; l < L; ++l) {
      const auto& bt = trace.blocks[static_cast<size_t>(l)];
      const auto& t = attn ? bt.attnNormOut : bt.ffnNormOut;
      if (!t.defined()) continue;
      auto c = t.to(torch::kFloat32).contiguous();
      out[static_cast<size_t>(l)] =
          static_cast<float>(kernels::elementVariance(c.data_ptr<float>(), c.numel()));
    }
    return out;
  };
  r.normVarAttn = normVariance(true);
  r.normVarFfn = normVariance(false);
  if (o.angularMatrix) {
    r.angularMatrix.assign(static_cast<size_t>(L) * L, kNaN);
    at::parallel_for(0, L, 1, [&](int64_t b, int64_t e) {
      kernels::angularMatrixRows(x.data(), L, C, rows, norms.data(), b, e, r.angularMatrix.data());
    });
  }
}

}  // namespace

ForwardProbes runForwardProbes(model::Decoder& model, const torch::Tensor& inputs,
                               const torch::Tensor& targets, const ForwardProbeOptions& o) {
  torch::NoGradGuard ng;
  EvalScope scope(model);
  model::ForwardTrace trace;
  auto logits = tracedForward(model, inputs, trace);
  ForwardProbes r = statsOfTrace(trace, targets, o);
  r.probeLoss = lossOf(logits, targets);
  const auto real = realTokens(targets);  // undefined: no pads
  r.saturation = dytSaturation(model, trace, real);
  r.saturationFinal = dytFinalSaturation(model, trace, real);
  return r;
}

ForwardProbes statsOfTrace(const model::ForwardTrace& trace, const torch::Tensor& targets,
                           const ForwardProbeOptions& o) {
  torch::NoGradGuard ng;
  const int L = static_cast<int>(trace.blockInputs.size()) - 1;
  if (L < 1 || trace.blocks.size() != static_cast<size_t>(L)) {
    throw std::invalid_argument(
        "a traced pass needs L + 1 residual streams and L block traces (got " +
        std::to_string(trace.blockInputs.size()) + " and " + std::to_string(trace.blocks.size()) +
        ")");
  }
  const auto& x0 = trace.blockInputs.front();
  for (const auto& x : trace.blockInputs) {
    if (x.dim() != 3 || x.sizes() != x0.sizes() || x.device() != x0.device()) {
      throw std::invalid_argument(
          "every residual stream of a traced pass must be (B, T, C) of "
          "one shape on one device");
    }
  }
  if (targets.defined() &&
      (targets.dim() != 2 || targets.size(0) != x0.size(0) || targets.size(1) != x0.size(1))) {
    throw std::invalid_argument(
        "the targets must be (B, T) as the residual streams' first two sizes");
  }
  ForwardProbes r;
  const auto real = targets.defined() ? realTokens(targets) : torch::Tensor();  // undefined: all
  if (!real.defined() && kernels::fusedKernelsEnabled() && x0.device().is_cpu()) {
    statsFromKernels(r, trace, o, L);
  } else {
    statsFromTensors(r, trace, o, L, real);
  }
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

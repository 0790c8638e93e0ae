// Depth probes; see depth_probes.h.
#include "probes/depth_probes.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <limits>

#include "kernels/cpu_kernels.h"
#include "kernels/probe_kernels.h"
#include "probes/probe_math.h"

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

double lossOf(const torch::Tensor& logits, const torch::Tensor& targets) {
  return torch::nn::functional::cross_entropy(
             logits.reshape({-1, logits.size(-1)}).to(torch::kFloat32), targets.reshape({-1}))
      .item<double>();
}

std::vector<float> toVec(const torch::Tensor& t) {
  auto c = t.to(torch::kFloat32).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

// The stats from tensor operations in float64 (any device): the reference path, and the one
// GPU runs take.
void statsFromTensors(ForwardProbes& r, const model::ForwardTrace& trace,
                      const ForwardProbeOptions& o, int L) {
  // All L+1 residual streams at once: x[l] enters block l, x[L] is the final residual.
  auto xs = torch::stack(trace.blockInputs).to(torch::kFloat64);        // (L+1, B, T, C)
  auto flat = xs.flatten(1);                                           // (L+1, B*T*C)
  r.variance = toVec(flat.slice(0, 1).var(1, /*unbiased=*/false));     // (L)
  auto diff2 = (flat.slice(0, 1) - flat.slice(0, 0, L)).pow(2).sum(1);  // (L)
  auto norm2 = flat.slice(0, 1).pow(2).sum(1);                         // (L)
  r.effectiveness = toVec(torch::where(norm2 > 0, diff2 / norm2.clamp_min(1e-300),
                                       torch::zeros_like(norm2)));
  // Tokens for the angular measures: (L+1, N, C), unit length (zero vectors stay zero).
  auto tok = o.lastTokenOnly ? xs.select(2, xs.size(2) - 1) : xs.flatten(1, 2);
  auto norms = tok.norm(2, -1, /*keepdim=*/true);                     // (L+1, N, 1)
  auto unit = tok / norms.clamp_min(1e-300);
  auto zero = (norms.squeeze(-1) == 0);                                // (L+1, N)
  auto distance = [&](int n) {                                         // (L+1-n, N)
    auto cos = (unit.slice(0, 0, L + 1 - n) * unit.slice(0, n)).sum(-1).clamp(-1.0, 1.0);
    auto d = torch::acos(cos) / M_PI;  // a zero vector has cos 0 -> 0.5
    auto bothZero = zero.slice(0, 0, L + 1 - n) & zero.slice(0, n);
    return torch::where(bothZero, torch::zeros_like(d), d);
  };
  auto adjacent = distance(1);                                         // (L, N)
  r.angularAdjacent = toVec(adjacent.mean(1));
  r.blockInfluence = toVec(1.0 - torch::cos(adjacent * M_PI).mean(1));
  auto normVariance = [&](bool attn) {  // (L), NaN for blocks without a pre-norm (Post-LN)
    std::vector<float> out(static_cast<size_t>(L), kNaN);
    std::vector<torch::Tensor> outs;
    std::vector<size_t> where;
    for (int l = 0; l < L; ++l) {
      const auto& bt = trace.blocks[static_cast<size_t>(l)];
      const auto& t = attn ? bt.attnNormOut : bt.ffnNormOut;
      if (t.defined()) { outs.push_back(t.flatten()); where.push_back(static_cast<size_t>(l)); }
    }
    if (!outs.empty()) {
      auto v = toVec(torch::stack(outs).to(torch::kFloat64).var(1, /*unbiased=*/false));
      for (size_t i = 0; i < where.size(); ++i) out[where[i]] = v[i];
    }
    return out;
  };
  r.normVarAttn = normVariance(true);
  r.normVarFfn = normVariance(false);
  if (o.angularMatrix) {
    r.angularMatrix.assign(static_cast<size_t>(L) * L, kNaN);
    for (int n = 1; n <= L; ++n) {
      auto row = toVec(distance(n).mean(1));                           // (L+1-n) for l = 0..L-n
      for (int l = 0; l + n <= L; ++l) {
        r.angularMatrix[static_cast<size_t>(l) * L + (n - 1)] = row[static_cast<size_t>(l)];
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
  auto logits = model->forward(inputs, {}, &trace);
  const int L = model->nLayers();
  ForwardProbes r;
  r.probeLoss = lossOf(logits, targets);
  if (kernels::fusedKernelsEnabled() && inputs.device().is_cpu()) {
    statsFromKernels(r, trace, o, L);
  } else {
    statsFromTensors(r, trace, o, L);
  }
  return r;
}

LazyCounts classifyLayers(const std::vector<float>& e, double lazy, double low) {
  LazyCounts c;
  for (float v : e) {
    if (v < lazy) ++c.lazy;
    else if (v < low) ++c.low;
    else ++c.effective;
  }
  return c;
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
  double fullLoss = 0;
};

PrefixCache prefix(model::Decoder& model, const torch::Tensor& inputs, const torch::Tensor& targets) {
  model::ForwardTrace trace;
  PrefixCache c;
  c.fullLoss = lossOf(model->forward(inputs, {}, &trace), targets);
  c.inputs = std::move(trace.blockInputs);
  return c;
}

double prunedLoss(model::Decoder& model, const PrefixCache& cache, const torch::Tensor& targets,
                  const std::vector<bool>& skip, bool renumber) {
  int first = 0;
  while (first < model->nLayers() && !skip[static_cast<size_t>(first)]) ++first;
  model::ForwardOptions opts;
  opts.skip = skip;
  if (renumber) opts.scaleOverride = renumberedScales(model, skip);
  if (first == model->nLayers()) return cache.fullLoss;
  return lossOf(model->forwardFrom(cache.inputs[static_cast<size_t>(first)], first, opts), targets);
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

std::vector<float> singleLayerPruning(model::Decoder& model, const torch::Tensor& inputs,
                                      const torch::Tensor& targets, bool renumber) {
  torch::NoGradGuard ng;
  EvalScope scope(model);
  const int L = model->nLayers();
  const auto cache = prefix(model, inputs, targets);
  std::vector<bool> none(static_cast<size_t>(L), false);
  std::vector<float> delta;
  for (int l = 0; l < L; ++l) {
    auto skip = none;
    skip[static_cast<size_t>(l)] = true;
    delta.push_back(static_cast<float>(prunedLoss(model, cache, targets, skip, renumber) -
                                       cache.fullLoss));
  }
  return delta;
}

BlockPruning blockPruning(model::Decoder& model, const torch::Tensor& inputs,
                          const torch::Tensor& targets, const std::vector<float>& angular,
                          bool renumber) {
  torch::NoGradGuard ng;
  EvalScope scope(model);
  const int L = model->nLayers();
  const auto cache = prefix(model, inputs, targets);
  std::vector<bool> none(static_cast<size_t>(L), false);
  BlockPruning r;
  r.delta.assign(static_cast<size_t>(L) * L, kNaN);
  r.bestStart.assign(static_cast<size_t>(L), kNaN);
  for (int l = 0; l < L; ++l) {
    for (int n = 1; l + n <= L; ++n) {
      auto skip = none;
      for (int k = l; k < l + n; ++k) skip[static_cast<size_t>(k)] = true;
      r.delta[static_cast<size_t>(l) * L + (n - 1)] =
          static_cast<float>(prunedLoss(model, cache, targets, skip, renumber) - cache.fullLoss);
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
                                      int samples, uint64_t seed) {
  EvalScope scope(model);
  model::ForwardTrace trace;
  {
    torch::NoGradGuard ng;
    model->forward(inputs, {}, &trace);
  }
  // A private generator: the probes must not advance torch's global RNG.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  model::Rope rope(model->config().dModel / model->config().nHeads, model->config().seqLen,
                   model->config().ropeBase);
  rope.to(inputs.device());
  std::vector<float> out;
  for (int l = 0; l < model->nLayers(); ++l) {
    auto x = trace.blockInputs[static_cast<size_t>(l)].detach().clone().requires_grad_(true);
    auto y = model->block(l)->forward(x, rope);
    double sum = 0;
    for (int s = 0; s < samples; ++s) {
      auto u = torch::randn(x.sizes(), gen, torch::TensorOptions().dtype(torch::kFloat32)).to(x.device());
      u = u / u.norm();
      auto vjp = torch::autograd::grad({y}, {x}, {u}, /*retain_graph=*/true)[0];
      sum += (vjp - u).norm().item<double>();
    }
    out.push_back(static_cast<float>(sum / samples));
  }
  return out;
}

}  // namespace depthlab::probes

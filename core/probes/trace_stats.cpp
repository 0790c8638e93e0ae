// The forward statistics of a traced pass (probes::statsOfTrace, declared in depth_probes.h):
// per-layer variance, norm-output variance, adjacent angular distance, Block Influence, E_l
// and the angular (l, n) matrix, through the fused CPU kernels where they apply, else through
// tensor ops on the trace's device. Not here: running the pass, pruning, Jacobians
// (depth_probes.cpp).
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/cpu_kernels.h"
#include "kernels/probe_kernels.h"
#include "probes/attention_sinks.h"
#include "probes/depth_probes.h"
#include "probes/probe_math.h"
#include "probes/probe_tokens.h"
#include "probes/stream_outliers.h"
#include "probes/sublayer_contributions.h"
#include "probes/trace_stats.h"
#include "train/thread_share.h"

namespace depthlab::probes {

std::vector<double> hostValues(const std::vector<torch::Tensor>& parts) {
  if (parts.empty()) return {};
  auto host = torch::stack(parts).to(torch::kCPU, torch::kFloat64).contiguous();
  return std::vector<double>(host.data_ptr<double>(), host.data_ptr<double>() + host.numel());
}

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

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
  return statsOfTraceMasked(trace, targets.defined() ? realTokens(targets) : torch::Tensor(), o);
}

ForwardProbes statsOfTraceMasked(const model::ForwardTrace& trace, const torch::Tensor& real,
                                 const ForwardProbeOptions& o) {
  torch::NoGradGuard ng;
  const int L = static_cast<int>(trace.blockInputs.size()) - 1;
  ForwardProbes r;
  if (!real.defined() && kernels::fusedKernelsEnabled() && trace.blockInputs.front().is_cpu()) {
    statsFromKernels(r, trace, o, L);
  } else {
    statsFromTensors(r, trace, o, L, real);
  }
  if (o.outliers) {
    r.outliers = streamOutliers(trace, real);
    r.sublayers = sublayerContributions(trace, real);
    r.sinks = attentionSinks(trace, real);
  }
  return r;
}

}  // namespace depthlab::probes

// The logit lens; see logit_lens.h.
// Per token n and layer l, over the vocabulary in chunks (z_l = the capped logits of layer l):
//   m_l, s_l = running max and sum exp(z_l - m_l)   -> lse_l = m_l + log s_l
//   t_l      = running sum exp(z_l - m_l) z_l        -> H(q_l) = lse_l - t_l / s_l
//   u_l      = running sum exp(z_L - m_L) z_l        -> E_p[z_l] = u_l / s_L
// so KL(p || q_l) = (E_p[z_L] - lse_L) - (E_p[z_l] - lse_l) without any layer's (N, V) logits.
#include "probes/logit_lens.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "probes/head_loss.h"
#include "probes/probe_tokens.h"
#include "probes/trace_stats.h"

namespace depthlab::probes {

namespace {

constexpr int64_t kIgnore = -100;

// One layer's running sums over the chunks seen so far; every tensor (N) float64.
struct Running {
  torch::Tensor max, sumExp, sumExpLogit, finalWeighted, bestLogit, bestIndex, targetLogit;
};

Running startRunning(int64_t n, const torch::TensorOptions& f64) {
  Running r;
  r.max = torch::full({n}, -std::numeric_limits<double>::infinity(), f64);
  r.sumExp = torch::zeros({n}, f64);
  r.sumExpLogit = torch::zeros({n}, f64);
  r.finalWeighted = torch::zeros({n}, f64);
  r.bestLogit = torch::full({n}, -std::numeric_limits<double>::infinity(), f64);
  r.bestIndex = torch::zeros({n}, f64.dtype(torch::kInt64));
  r.targetLogit = torch::zeros({n}, f64);
  return r;
}

// Adds the chunk [v0, v0 + c) of one layer's logits z (N, c) float64. `finalExp` (N, c): the
// final layer's exp(z_L - m_L) of this chunk under its new max, `finalRescale` (N) what the
// final's earlier sums are multiplied by for that max; `targets` (N) int64.
void addChunk(Running& r, const torch::Tensor& z, int64_t v0, const torch::Tensor& finalExp,
              const torch::Tensor& finalRescale, const torch::Tensor& targets) {
  auto [chunkMax, chunkArg] = z.max(1);  // (N), (N)
  auto newMax = torch::maximum(r.max, chunkMax);
  auto rescale = torch::exp(r.max - newMax);  // 0 on the first chunk (max was -inf)
  auto e = torch::exp(z - newMax.unsqueeze(1));
  r.sumExp = r.sumExp * rescale + e.sum(1);
  r.sumExpLogit = r.sumExpLogit * rescale + (e * z).sum(1);
  r.finalWeighted = r.finalWeighted * finalRescale + (finalExp * z).sum(1);
  r.max = newMax;
  auto better = chunkMax > r.bestLogit;  // strictly: the first index wins ties, as argmax
  r.bestLogit = torch::where(better, chunkMax, r.bestLogit);
  r.bestIndex = torch::where(better, chunkArg + v0, r.bestIndex);
  const int64_t c = z.size(1);
  auto inChunk = (targets >= v0) & (targets < v0 + c);
  auto local = (targets - v0).clamp(0, c - 1).unsqueeze(1);
  r.targetLogit = torch::where(inChunk, z.gather(1, local).squeeze(1), r.targetLogit);
}

torch::Tensor capped(torch::Tensor z, double softcap) {
  return softcap > 0 ? torch::tanh(z / softcap) * softcap : z;
}

}  // namespace

LogitLens lensOfHidden(const std::vector<torch::Tensor>& normed, const torch::Tensor& weight,
                       double softcap, const torch::Tensor& targets, int64_t chunkRows) {
  const int64_t L = static_cast<int64_t>(normed.size());
  if (L == 0) throw std::invalid_argument("the logit lens needs at least one layer");
  const int64_t N = normed.front().size(0), V = weight.size(0);
  if (N == 0) throw std::invalid_argument("the logit lens needs at least one token");
  if (chunkRows < 1) chunkRows = kHeadChunkRows;
  const auto f64 = normed.front().options().dtype(torch::kFloat64);
  std::vector<Running> run;
  for (int64_t l = 0; l < L; ++l) run.push_back(startRunning(N, f64));
  torch::Tensor finalMax = run.back().max.clone();
  for (int64_t v0 = 0; v0 < V; v0 += chunkRows) {
    const auto w = weight.slice(0, v0, std::min(V, v0 + chunkRows)).to(torch::kFloat32);  // (c, C)
    auto zFinal = capped(torch::matmul(normed.back(), w.t()).to(torch::kFloat64), softcap);
    // The final distribution's weights for this chunk, under the max after it.
    auto newFinalMax = torch::maximum(finalMax, std::get<0>(zFinal.max(1)));
    auto finalRescale = torch::exp(finalMax - newFinalMax);         // (N)
    auto finalExp = torch::exp(zFinal - newFinalMax.unsqueeze(1));  // (N, c)
    finalMax = newFinalMax;
    for (int64_t l = 0; l < L; ++l) {
      auto z =
          l == L - 1
              ? zFinal
              : capped(torch::matmul(normed[static_cast<size_t>(l)], w.t()).to(torch::kFloat64),
                       softcap);  // (N, c)
      addChunk(run[static_cast<size_t>(l)], z, v0, finalExp, finalRescale, targets);
    }
  }
  const Running& fin = run.back();
  const auto finalLse = fin.max + fin.sumExp.log();                  // (N)
  const auto finalTerm = fin.finalWeighted / fin.sumExp - finalLse;  // E_p[log p]
  const auto counted = targets.ne(kIgnore).to(torch::kFloat64);      // (N)
  // No counted target (every token's is a pad): the cross-entropy is NaN, not 0.
  const auto nCounted = counted.sum();
  std::vector<torch::Tensor> kl, top1, entropy, ce, agree;
  for (const auto& r : run) {
    const auto lse = r.max + r.sumExp.log();
    kl.push_back((finalTerm - (r.finalWeighted / fin.sumExp - lse)).mean());
    agree.push_back(r.bestIndex.eq(fin.bestIndex));
    top1.push_back(agree.back().to(torch::kFloat64).mean());
    entropy.push_back((lse - r.sumExpLogit / r.sumExp).mean());
    ce.push_back(((lse - r.targetLogit) * counted).sum() / nCounted);
  }
  // A token settles at the first layer of the longest run of agreement that ends at block L.
  auto agreeing = torch::stack(agree).to(torch::kInt64);               // (L, N)
  auto fromHere = agreeing.flip(0).cumprod(0).flip(0);                 // (L, N)
  auto settle = (L - fromHere.sum(0) + 1).to(torch::kFloat64).mean();  // ()
  // (4L + 1): KL, top-1, entropy, cross-entropy, the settle depth; one copy to the host.
  const auto host =
      hostValues({torch::cat({torch::stack(kl), torch::stack(top1), torch::stack(entropy),
                              torch::stack(ce), settle.reshape({1})})});
  LogitLens out;
  auto take = [&](int64_t at) {
    return std::vector<float>(host.begin() + at, host.begin() + at + L);
  };
  out.kl = take(0);
  out.top1 = take(L);
  out.entropy = take(2 * L);
  out.crossEntropy = take(3 * L);
  out.settleDepth = host[static_cast<size_t>(4 * L)];
  return out;
}

LogitLens logitLensOfTrace(model::Decoder& model, const model::ForwardTrace& trace,
                           const torch::Tensor& targets) {
  return lensOfTrace(model, trace, targets, {});
}

LogitLens lensOfTrace(model::Decoder& model, const model::ForwardTrace& trace,
                      const torch::Tensor& targets,
                      const std::function<torch::Tensor(int, const torch::Tensor&)>& transform) {
  const int L = model->nLayers();
  if (static_cast<int>(trace.blockInputs.size()) != L + 1) {
    throw std::invalid_argument("the logit lens needs a trace of every block's input");
  }
  torch::NoGradGuard ng;
  const auto real = realTokens(targets);  // undefined: every position counts
  auto rows = [&](const torch::Tensor& x) {
    return real.defined() ? realRows(x, real) : x.flatten(0, 1);  // (N, ...)
  };
  std::vector<torch::Tensor> normed;
  for (int l = 1; l <= L; ++l) {
    const auto& x = trace.blockInputs[static_cast<size_t>(l)];  // (B, T, C)
    normed.push_back(rows(model->norm->forward(transform ? transform(l, x) : x))
                         .to(torch::kFloat32)
                         .contiguous());  // (N, C)
  }
  const auto tokenTargets = rows(targets.unsqueeze(-1)).squeeze(-1);  // (N)
  return lensOfHidden(normed, headWeight(model), model->config().finalSoftcap, tokenTargets);
}

}  // namespace depthlab::probes

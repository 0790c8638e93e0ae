// See head_loss.h.
#include "probes/head_loss.h"

#include <algorithm>
#include <optional>

#include "model/layers.h"
#include "probes/probe_tokens.h"

namespace depthlab::probes {

namespace {
constexpr int64_t kIgnoreTarget = -100;  // data::kIgnoreTarget
}  // namespace

torch::Tensor chunkedTokenLosses(const torch::Tensor& hidden, const torch::Tensor& weight,
                                 const torch::Tensor& targets, int64_t chunkRows, double softcap) {
  if (chunkRows < 1) chunkRows = kHeadChunkRows;
  const int64_t V = weight.size(0);
  const auto h = hidden.to(torch::kFloat32);  // (N, C)
  const auto t = targets.reshape({-1});       // (N)
  torch::Tensor lse, picked;                  // (N) running logsumexp, the target's logit
  for (int64_t v0 = 0; v0 < V; v0 += chunkRows) {
    const int64_t v1 = std::min(V, v0 + chunkRows);
    // The decoder's head restricted to rows v0..v1: the same dot products as its logits.
    auto logits = torch::linear(h, model::weightFor(weight.slice(0, v0, v1), h));  // (N, v1-v0)
    if (softcap > 0) logits = torch::tanh(logits / softcap) * softcap;
    auto chunkLse = logits.logsumexp(1);                                           // (N)
    lse = lse.defined() ? torch::logaddexp(lse, chunkLse) : chunkLse;
    auto inChunk = t.ge(v0).logical_and(t.lt(v1));                                 // (N)
    auto at = logits.gather(1, (t - v0).clamp(0, v1 - v0 - 1).unsqueeze(1)).squeeze(1);
    picked = picked.defined() ? torch::where(inChunk, at, picked)
                              : torch::where(inChunk, at, torch::zeros_like(at));
  }
  auto losses = lse - picked;  // -log softmax at the target
  return torch::where(t.eq(kIgnoreTarget), torch::zeros_like(losses), losses);
}

torch::Tensor chunkedSequenceLosses(const torch::Tensor& hidden, const torch::Tensor& weight,
                                    const torch::Tensor& targets, const torch::Tensor& counted,
                                    int64_t chunkRows, double softcap) {
  auto perToken = chunkedTokenLosses(hidden.reshape({-1, hidden.size(-1)}), weight,
                                     targets.reshape({-1}), chunkRows, softcap);
  auto rows = perToken.view({targets.size(0), -1});  // (B, T); 0 at a pad
  if (!counted.defined()) return rows.mean(1);
  return rows.sum(1) / counted.clamp_min(1.0);
}

torch::Tensor headWeight(model::Decoder& model) {
  return model->lm_head ? model->lm_head->weight : model->embed_tokens->weight;
}

torch::Tensor hiddenFrom(model::Decoder& model, const torch::Tensor& input, int startBlock,
                         const model::ForwardOptions& opts) {
  auto x = input;  // (B, T, C)
  for (int i = startBlock; i < model->nLayers(); ++i) {
    const auto k = static_cast<size_t>(i);
    if (!opts.skip.empty() && opts.skip[k]) continue;  // pruned: identity
    std::optional<double> s;
    if (!opts.scaleOverride.empty()) s = opts.scaleOverride[k];
    x = model->block(i)->forward(x, model->rope(i), s);  // each block its own tables (Gemma 3)
  }
  return model->norm->forward(x);  // (B, T, C)
}

torch::Tensor ChunkedHead::losses(model::Decoder& model, const torch::Tensor& x, int first,
                                  const model::ForwardOptions& opts, const torch::Tensor& targets,
                                  const torch::Tensor& counted) const {
  return chunkedSequenceLosses(hiddenFrom(model, x, first, opts), weight, targets, counted,
                               kHeadChunkRows, softcap);
}

std::optional<ChunkedHead> chunkedHeadFor(model::Decoder& model, const torch::Tensor& embedded,
                                          const torch::Tensor& targets,
                                          const torch::Tensor& counted, torch::Tensor& fullLosses) {
  const auto weight = headWeight(model);
  if (weight.size(0) <= kHeadChunkRows) return std::nullopt;
  ChunkedHead head{weight, model->config().finalSoftcap};  // Gemma 2 caps its logits
  auto mine = head.losses(model, embedded, 0, {}, targets, counted);  // (B)
  const double worst =
      ((mine - fullLosses).abs() / fullLosses.abs().clamp_min(1e-6)).max().item<double>();
  if (!(worst <= 1e-5)) return std::nullopt;  // NaN too
  fullLosses = mine;
  return head;
}

namespace {
// What the decoder's forward(idx) feeds block 0 (scaled embeddings, learned positions).
torch::Tensor embedded(model::Decoder& model, const torch::Tensor& idx) {
  return model->embed(idx);  // (B, T, C)
}
}  // namespace

double WindowLosses::sum(const torch::Tensor& inputs, const torch::Tensor& targets) {
  torch::NoGradGuard ng;
  if (!m_decided) {
    m_decided = true;
    if (headWeight(m_model).size(0) > kHeadChunkRows) {
      const auto one = inputs.slice(0, 0, 1), oneTargets = targets.slice(0, 0, 1);
      auto full = sequenceLosses(m_model->forward(one), oneTargets, {});  // (1)
      m_head = chunkedHeadFor(m_model, embedded(m_model, one), oneTargets, {}, full);
    }
  }
  if (m_head) {
    const auto h = hiddenFrom(m_model, embedded(m_model, inputs), 0, {});  // (B, T, C)
    return chunkedTokenLosses(h.reshape({-1, h.size(-1)}), m_head->weight, targets.reshape({-1}),
                              kHeadChunkRows, m_head->softcap)
        .to(torch::kFloat64)
        .sum()
        .item<double>();
  }
  auto logits = m_model->forward(inputs).to(torch::kFloat32);  // (B, T, V)
  namespace F = torch::nn::functional;
  return F::cross_entropy(logits.reshape({-1, logits.size(-1)}), targets.reshape({-1}),
                          F::CrossEntropyFuncOptions().reduction(torch::kSum))
      .item<double>();
}

}  // namespace depthlab::probes

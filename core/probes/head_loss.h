// The loss of a model's final hidden states against its output head, computed over the
// vocabulary in chunks of rows with a running logsumexp instead of one (B, T, V) logits tensor:
// on a 128k-152k vocabulary the head is most of a pruned evaluation's work and its logits (and
// the float32 copy of a bf16 head) most of its memory. Each chunk widens only its own rows of
// the head (a bf16 import stays bf16 in memory). The same loss as cross_entropy on the logits
// to ~1e-6 relative (the same dot products; only the sum of exponentials is ordered otherwise).
// Also the blocks-only forward pass (no head) that pruning evaluations run through, and the
// summed loss of `eval`'s windows (WindowLosses).
// Does not: choose when the probes use it (depth_probes.cpp does) or change the model.
// Legend: B rows, T sequence length, C width, V vocabulary, N tokens (B x T).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <optional>

#include "model/decoder.h"

namespace depthlab::probes {

/// Head rows per chunk: 4096 x C float32 (32 MB at C = 2048) and (N, 4096) logits at a time.
constexpr int64_t kHeadChunkRows = 4096;

/// (N) float32 cross-entropy of each token: hidden (N, C) float32 against weight (V, C) (any
/// float dtype, widened chunk by chunk), targets (N) int64; a target of -100 (a pad) gives 0,
/// as cross_entropy's ignore_index does. `chunkRows` < 1 means kHeadChunkRows. `softcap` > 0:
/// the logits are softcap * tanh(logits / softcap) first (Gemma 2's final soft-capping).
torch::Tensor chunkedTokenLosses(const torch::Tensor& hidden, const torch::Tensor& weight,
                                 const torch::Tensor& targets, int64_t chunkRows = kHeadChunkRows,
                                 double softcap = 0);

/// (B) the mean cross-entropy of each sequence over its counted targets, as sequenceLosses
/// (probe_tokens.h) on the logits of hidden (B, T, C): `counted` from countedTargets,
/// undefined when every target counts.
torch::Tensor chunkedSequenceLosses(const torch::Tensor& hidden, const torch::Tensor& weight,
                                    const torch::Tensor& targets, const torch::Tensor& counted,
                                    int64_t chunkRows = kHeadChunkRows, double softcap = 0);

/// The output head's weight (V, C): lm_head's, or the embedding when they are tied.
torch::Tensor headWeight(model::Decoder& model);

/// What model->forwardFrom(x, startBlock, opts) feeds its head: blocks startBlock..L-1 on the
/// residual stream x (B, T, C) (skipped ones the identity, scales overridden as opts says),
/// then the final norm: (B, T, C).
torch::Tensor hiddenFrom(model::Decoder& model, const torch::Tensor& x, int startBlock,
                         const model::ForwardOptions& opts);

/// A pruning sweep's losses through hiddenFrom and chunkedSequenceLosses instead of the
/// decoder's logits.
struct ChunkedHead {
  torch::Tensor weight;  // (V, C) headWeight
  double softcap = 0;    // the decoder's final logit soft-cap (0: none)
  /// (B) per-sequence losses of the model run from block `first` on x (B, T, C), as
  /// sequenceLosses(model->forwardFrom(x, first, opts), targets, counted) gives them.
  torch::Tensor losses(model::Decoder& model, const torch::Tensor& x, int first,
                       const model::ForwardOptions& opts, const torch::Tensor& targets,
                       const torch::Tensor& counted) const;
};

/// The chunked path for `model` when its vocabulary is more than one chunk and the path gives
/// the decoder's own per-sequence losses `fullLosses` (B) of the unpruned model (run from
/// `embedded`, the input of block 0) to 1e-5 relative; `fullLosses` then becomes the path's
/// own, so that the pruned losses are differences along one path. Otherwise (a small head, or
/// a decoder whose head or blocks do something the path does not, e.g. a logit soft-cap)
/// nullopt: the caller keeps the decoder's logits.
std::optional<ChunkedHead> chunkedHeadFor(model::Decoder& model, const torch::Tensor& embedded,
                                          const torch::Tensor& targets,
                                          const torch::Tensor& counted, torch::Tensor& fullLosses);

/// The summed next-token cross-entropy of a model over batches of windows (eval): inputs and
/// targets (B, T), no pads. Through hiddenFrom and the chunked head when the vocabulary is over
/// one chunk and, on the first batch's first row, that path gives the decoder's own loss to
/// 1e-5 relative (chunkedHeadFor); else from the decoder's (B, T, V) logits.
class WindowLosses {
 public:
  explicit WindowLosses(model::Decoder& model) : m_model(model) {}
  double sum(const torch::Tensor& inputs, const torch::Tensor& targets);
  bool chunked() const { return m_head.has_value(); }

 private:
  model::Decoder& m_model;
  bool m_decided = false;
  std::optional<ChunkedHead> m_head;
};

}  // namespace depthlab::probes

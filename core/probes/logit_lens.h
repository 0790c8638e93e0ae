// The logit lens (nostalgebraist 2020; the metrics of Belrose et al., arXiv 2303.08112): the
// model's own final norm and unembedding applied to the residual stream after each block, read
// as a next-token distribution q_l, and compared with the model's output p (= q_L):
// KL(p || q_l), whether q_l's top-1 token is p's, q_l's entropy, q_l's cross-entropy against the
// targets, and the depth at which the prediction settles. Computed over the vocabulary in chunks
// of rows with running (online) log-sum-exps, so no (N, V) logits tensor of any layer exists
// (a 128k vocabulary at 32 layers stays ~N x 4096 floats), in float64 accumulators, and every
// result stays on the model's device until one copy to the host at the end.
// Does not: run the forward pass (depth_probes.cpp traces it), choose a cadence, or store.
// Legend: L blocks, B probe rows, T sequence length, C width, V vocabulary, N counted tokens.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "model/decoder.h"

namespace depthlab::probes {

struct LogitLens {
  std::vector<float> kl;            // (L) mean over tokens of KL(p || q_l), nats; 0 at block L
  std::vector<float> top1;          // (L) share of tokens with argmax q_l = argmax p
  std::vector<float> entropy;       // (L) mean entropy of q_l, nats
  std::vector<float> crossEntropy;  // (L) mean -log q_l(target) over the counted targets
  double settleDepth = 0;  // mean over tokens of the first block (1-based) from which every
                           // q_l's top-1 is p's through block L (L: settles only at the end)
};

/// The lens statistics of normed hidden states: `normed` holds L tensors (N, C) float32, the
/// final norm of the stream after block 1..L (the last one is what the model's head reads);
/// `weight` the head (V, C), any float dtype, widened a chunk of `chunkRows` rows at a time;
/// `softcap` > 0 caps every logit as the model's head does; `targets` (N) int64, -100 where a
/// token has no target (its cross-entropy is left out; every other statistic counts it).
LogitLens lensOfHidden(const std::vector<torch::Tensor>& normed, const torch::Tensor& weight,
                       double softcap, const torch::Tensor& targets, int64_t chunkRows = 4096);

/// The logit lens of a traced pass of `model`: the final norm over trace.blockInputs[1..L] at
/// the tokens that count (realTokens(targets): pads left out), through the model's head.
/// targets (B, T) int64.
LogitLens logitLensOfTrace(model::Decoder& model, const model::ForwardTrace& trace,
                           const torch::Tensor& targets);

/// The same statistics with the stream after block l (l = 1..L, (B, T, C)) first passed through
/// `transform(l, x)` before the final norm (the tuned lens's translators, probes/tuned_lens.h);
/// an empty `transform` is the logit lens.
LogitLens lensOfTrace(model::Decoder& model, const model::ForwardTrace& trace,
                      const torch::Tensor& targets,
                      const std::function<torch::Tensor(int, const torch::Tensor&)>& transform);

}  // namespace depthlab::probes

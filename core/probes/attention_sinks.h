// Attention sinks and entropy per block, from a traced pass (model::BlockTrace's attnEntropy
// and attnFirstKey, reduced inside the attention): the mean entropy of the queries' attention
// distributions, the mean attention on the first position (the sink; Xiao et al. 2023), and
// the sink rate of Gu et al. (arXiv 2410.10781): the share of heads whose mean attention on the
// first position exceeds 0.3. Pre-norm is what lets sinks form (arXiv 2603.05498), so Pre-LN,
// LNS, Peri-LN and DyT differ here. Over the real query positions after the first (position 0
// can only attend to itself); on the trace's device, one copy to the host.
// Does not: run the pass or keep the (B, H, T, T) probabilities.
// Legend: L blocks, B rows, H heads, T positions.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "model/decoder.h"

namespace depthlab::probes {

/// A head is a sink head when its mean attention on the first position exceeds this (Gu et al.).
constexpr double kSinkThreshold = 0.3;

struct AttentionSinks {
  std::vector<float> entropy;        // (L) mean entropy of a query's attention, nats
  std::vector<float> firstKeyShare;  // (L) mean attention on the first position
  std::vector<float> sinkRate;       // (L) share of heads above kSinkThreshold
};

/// The sink statistics of every block of `trace`; `real` (B, T) bool from realTokens
/// (undefined: every position). Empty vectors when the trace holds no attention statistics
/// (a watched model's) or T < 2.
AttentionSinks attentionSinks(const model::ForwardTrace& trace, const torch::Tensor& real);

}  // namespace depthlab::probes

// The skip-effect matrix of Csordás, Manning, Potts (arXiv 2505.13898, "Do language models use
// their depth efficiently?"): skip block s (its output is its input, at every position but the
// first, which keeps its block as in the authors' code so the first token's stream - the
// attention sink - stays), run the later blocks on what follows, and measure how much each later
// block l's contribution Delta_l = x_{l+1} - x_l changes:
//   E[s][l] = mean over sequences of max over positions t >= 1 of
//             ||Delta'_l(t) - Delta_l(t)|| / ||Delta_l(t)||          (l > s; NaN for l <= s)
// the authors' relative change (max over the positions of a prompt, then the mean over prompts).
// A block whose skipping changes nothing later (a row near 0) does no computation the later
// blocks build on; the paper reads the second half of Pre-LN models as such.
// On the model's device, results copied to the host once.
// Does not: remove the block from the loss (depth_probes.h's pruning sweeps do), choose a
// cadence, or store.
// Legend: L blocks, B probe rows, T sequence length, C width.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "model/decoder.h"

namespace depthlab::probes {

struct SkipEffect {
  std::vector<float> matrix;  // (L x L) row s (block skipped), column l (later block): E[s][l];
                              // NaN where l <= s
};

/// The skip effect of every block of `model` on the batch `inputs` (B, T) int64; `targets`
/// (B, T) mark pads (-100: their positions do not count; undefined: every position counts).
/// Positions after the first only (T >= 2); an all-NaN matrix when T < 2 or L < 2.
SkipEffect skipEffect(model::Decoder& model, const torch::Tensor& inputs,
                      const torch::Tensor& targets);

}  // namespace depthlab::probes

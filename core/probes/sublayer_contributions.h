// How much each sublayer writes into the residual stream (Csordás, Manning, Potts, arXiv
// 2505.13898; Hu et al., arXiv 2512.14064): for the attention and the MLP sublayer of every
// block apart, the relative size of what it adds, ||Delta|| / ||stream it reads||, and its
// direction against that stream, cos(Delta, stream), each the mean over the real tokens. A block
// that only scales or repeats the stream (cos near 1 or -1, small norms) does little new work.
// Delta is what the branch adds to the residual stream, scaled as the scheme scales it, before any
// norm after the add (Post-LN, DeepNorm: N(alpha x + Delta); HybridNorm's MLP: N2(h) + Delta):
// the sublayer's own contribution, not the norm's rescaling of the stream. From a detailed traced
// pass (model::BlockTrace's attnDelta/attnStream, ffnDelta/ffnStream); on its device, one copy to
// the host.
// Does not: run the pass, or the skip-effect matrix and effective-depth ratio of those papers.
// Legend: L blocks, B rows, T positions, C width.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "model/decoder.h"

namespace depthlab::probes {

struct SublayerContributions {
  std::vector<float> attnRelative;  // (L) mean ||Delta_attn|| / ||its stream|| (x_l)
  std::vector<float> ffnRelative;   // (L) mean ||Delta_mlp|| / ||its stream|| (h_l; parallel: x_l)
  std::vector<float> attnCos;       // (L) mean cos(Delta_attn, its stream)
  std::vector<float> ffnCos;        // (L) mean cos(Delta_mlp, its stream)
};

/// The contributions of every block of `trace` (a detailed one); `real` (B, T) bool from
/// realTokens (undefined: every position). Empty vectors when no block holds its branches (a
/// trace that is not detailed, or made outside the lab's decoder); NaN for a block that does not
/// (left out of the pass) and for tokens whose stream is zero.
SublayerContributions sublayerContributions(const model::ForwardTrace& trace,
                                            const torch::Tensor& real);

}  // namespace depthlab::probes

// One number per run from a per-layer probe, as the effective-depth papers summarise depth:
// - effectiveDepthRatio (Hu, Zhou, Zhang, arXiv 2512.14064, their logit-lens criterion): the
//   first block l (1-based) whose logit-lens KL to the output is below 10% of the largest KL of
//   any block, over L. Near 1: the prediction forms only in the last blocks; small: the later
//   blocks refine what is already decided. The last block's KL is 0 by definition, so a model
//   whose KL never drops before it reads 1.
// - jumpStrength (after Shibata et al., arXiv 2601.18302, "final-layer hidden state jumps"): the
//   angular distance between the last block's input and output over the mean of that distance
//   at the middle blocks 2..L-1. Above 1: the last block turns the stream more than a typical
//   block does. The paper's exact normalisation was not at hand; this is the ratio its abstract
//   describes (docs/probes.md says so).
// Pure arithmetic on stored values; no torch. Does not: compute the lens or the distances.
#pragma once

#include <vector>

namespace depthlab::probes {

/// The share of the Hu et al. KL threshold below which the lens counts as settled.
inline constexpr double kEffectiveDepthKlShare = 0.1;

/// (l* + 1) / L from `kl` (L values, block 1..L); NaN when empty or no KL is finite.
double effectiveDepthRatio(const std::vector<float>& kl);
/// d_L / mean(d_2 .. d_{L-1}) from `adjacent` (L values d_l = d(x_{l-1}, x_l)); NaN for L < 3 or
/// a zero mean.
double jumpStrength(const std::vector<float>& adjacent);

}  // namespace depthlab::probes

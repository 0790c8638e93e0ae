// Outliers of the residual stream and its effective rank, per block, from a traced pass:
// massive activations (Sun et al., arXiv 2402.17762: a few elements thousands of times the
// median, which Pre-LN lets grow; arXiv 2603.05498), the first position's norm against the others
// (the attention-sink token's stream, arXiv 2510.06477) and RankMe (Garrido et al., arXiv
// 2210.02157), the effective rank of the tokens' representations. All over the real tokens
// (pads left out), on the trace's device, one copy to the host.
// Does not: run the pass, look inside attention (attention entropy and sink rates are not here).
// Legend: L blocks, B rows, T positions, C width, N real tokens.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "model/decoder.h"

namespace depthlab::probes {

struct StreamOutliers {
  std::vector<float> maxAbs;           // (L) largest |x| of the stream after block l
  std::vector<float> maxToMedian;      // (L) that over the median |x|
  std::vector<float> firstTokenRatio;  // (L) mean over rows of ||x_t=0|| / mean_{t>0} ||x_t||
                                       // (NaN when no row has a second real token)
  std::vector<float> rankMe;           // (L) exp(entropy of sigma_k / sum sigma + 1e-7) of (N, C)
};

/// The outlier statistics of the streams trace.blockInputs[1..L]; `real` (B, T) bool from
/// realTokens (undefined: every position counts).
StreamOutliers streamOutliers(const model::ForwardTrace& trace, const torch::Tensor& real);

}  // namespace depthlab::probes

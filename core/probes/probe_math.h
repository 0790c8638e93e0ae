// The measurements behind the depth probes, as pure tensor functions (fp32, no state):
// angular distance, variance, layer effectiveness and Block Influence.
// Legend: N tokens, C width. Inputs are (N, C) token vectors unless noted.
#pragma once

#include <torch/torch.h>

namespace depthlab::probes {

/// d = arccos(cos(a_t, b_t)) / pi per token, in [0, 1]: identical 0, orthogonal 0.5,
/// opposite 1. A zero vector has no direction: two zeros give 0, one zero gives 0.5 (the
/// official code's NaN -> 0.5 rule). a, b: (N, C) -> (N).
torch::Tensor angularDistance(const torch::Tensor& a, const torch::Tensor& b);
/// Population variance over every element of x (any shape) -> scalar.
double elementVariance(const torch::Tensor& x);
/// E = ||h - hPrev||^2 / ||h||^2 over all elements (0 when h is zero).
double layerEffectiveness(const torch::Tensor& hPrev, const torch::Tensor& h);
/// ShortGPT's Block Influence: 1 - mean_t cos(in_t, out_t). in, out: (N, C).
double blockInfluence(const torch::Tensor& in, const torch::Tensor& out);
/// Mean of the paired differences a_i - b_i (i < n) and its standard error (sample standard
/// deviation / sqrt(n), float64; NaN when n < 2).
struct MeanAndError { double mean = 0, standardError = 0; };
MeanAndError pairedDifference(const double* a, const double* b, int64_t n);
/// (B, T, C) -> (B*T, C), or (B, C) with the last position only.
torch::Tensor tokens(const torch::Tensor& x, bool lastTokenOnly);

}  // namespace depthlab::probes

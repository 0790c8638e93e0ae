// Stream outliers and effective rank; see stream_outliers.h.
#include "probes/stream_outliers.h"

#include <algorithm>
#include <cmath>

#include "probes/probe_tokens.h"
#include "probes/trace_stats.h"

namespace depthlab::probes {

namespace {

// (B) ||x_0|| / mean of ||x_t|| over the row's other real positions; NaN where it has none.
// norms (B, T); real (B, T) bool.
torch::Tensor firstOverOthers(const torch::Tensor& norms, const torch::Tensor& real) {
  auto others = real.slice(1, 1).to(norms.dtype());  // (B, T-1)
  auto count = others.sum(1);
  auto mean = (norms.slice(1, 1) * others).sum(1) / count;  // NaN (0/0) with no other token
  return norms.select(1, 0) / mean;
}

}  // namespace

StreamOutliers streamOutliers(const model::ForwardTrace& trace, const torch::Tensor& real) {
  torch::NoGradGuard ng;
  const size_t L = trace.blockInputs.size() - 1;
  std::vector<torch::Tensor> maxAbs, ratio, first, rank;
  for (size_t l = 1; l <= L; ++l) {
    const auto x = trace.blockInputs[l].to(torch::kFloat64);  // (B, T, C)
    const auto mask = real.defined()
                          ? real
                          : torch::ones({x.size(0), x.size(1)},
                                        torch::TensorOptions(x.device()).dtype(torch::kBool));
    const auto rows = realRows(x, mask);  // (N, C)
    const auto a = rows.abs().flatten();
    maxAbs.push_back(a.max());
    const auto median = a.median();
    ratio.push_back(
        torch::where(median > 0, maxAbs.back() / median, torch::full_like(median, std::nan(""))));
    const auto perRow = firstOverOthers(x.norm(2, -1), mask);  // (B)
    const auto valid = perRow.isfinite();
    first.push_back(perRow.masked_select(valid).mean());  // NaN when none is valid
    // The singular values of rows (N, C) from the eigenvalues of rows^T rows (C, C): the same
    // to ~1e-13, half the time of an SVD; its largest min(N, C) are the ones an SVD gives.
    const int64_t k = std::min(rows.size(0), rows.size(1));
    auto eig = torch::linalg_eigvalsh(torch::matmul(rows.t(), rows));  // (C) ascending
    auto sv = eig.slice(0, eig.size(0) - k).clamp_min(0).sqrt();       // (min(N, C))
    auto p = sv / sv.sum() + 1e-7;
    rank.push_back(torch::exp(-(p * p.log()).sum()));
  }
  const auto host = hostValues(
      {torch::stack(maxAbs), torch::stack(ratio), torch::stack(first), torch::stack(rank)});
  auto take = [&](size_t part) {
    return std::vector<float>(host.begin() + static_cast<long>(part * L),
                              host.begin() + static_cast<long>((part + 1) * L));
  };
  return {take(0), take(1), take(2), take(3)};
}

}  // namespace depthlab::probes

// Stream outliers and effective rank; see stream_outliers.h.
#include "probes/stream_outliers.h"

#include <algorithm>
#include <cmath>

#include "probes/probe_tokens.h"
#include "probes/trace_stats.h"

namespace depthlab::probes {

namespace {

// (L, B) ||x_0|| / mean of ||x_t|| over the row's other real positions; NaN where it has none.
// norms (L, B, T); real (B, T) bool.
torch::Tensor firstOverOthers(const torch::Tensor& norms, const torch::Tensor& real) {
  auto others = real.slice(1, 1).to(norms.dtype());         // (B, T-1)
  auto count = others.sum(1);                               // (B)
  auto mean = (norms.slice(2, 1) * others).sum(2) / count;  // (L, B); 0/0 = NaN
  return norms.select(2, 0) / mean;
}

}  // namespace

StreamOutliers streamOutliers(const model::ForwardTrace& trace, const torch::Tensor& real) {
  torch::NoGradGuard ng;
  const int64_t L = static_cast<int64_t>(trace.blockInputs.size()) - 1;
  // Every block's output at once: (L, B, T, C), so each statistic is one op over all blocks.
  const auto xs = torch::stack(
      std::vector<torch::Tensor>(trace.blockInputs.begin() + 1, trace.blockInputs.end()));
  const auto rows = real.defined() ? realRows(xs, real) : xs.flatten(1, 2);  // (L, N, C)
  // Largest and median |x|: selections, exact in float32.
  const auto a = rows.abs().flatten(1);                              // (L, N C)
  const auto maxAbs = std::get<0>(a.max(1)).to(torch::kFloat64);     // (L)
  const auto median = std::get<0>(a.median(1)).to(torch::kFloat64);  // (L)
  const auto ratio =
      torch::where(median > 0, maxAbs / median, torch::full_like(median, std::nan("")));
  const auto mask = real.defined()
                        ? real
                        : torch::ones({xs.size(1), xs.size(2)}, xs.options().dtype(torch::kBool));
  const auto perRow = firstOverOthers(xs.to(torch::kFloat64).norm(2, -1), mask.to(xs.device()));
  const auto valid = perRow.isfinite().to(torch::kFloat64);                   // (L, B)
  const auto first = (perRow.nan_to_num(0.0) * valid).sum(1) / valid.sum(1);  // NaN: none valid
  // RankMe from the eigenvalues of rows^T rows (L, C, C): the singular values of each (N, C) to
  // ~1e-13, in one batched call; the largest min(N, C) are the ones an SVD gives.
  const auto r64 = rows.to(torch::kFloat64);
  const int64_t k = std::min(r64.size(1), r64.size(2));
  auto eig = torch::linalg_eigvalsh(torch::matmul(r64.transpose(1, 2), r64));  // (L, C) ascending
  auto sv = eig.slice(1, eig.size(1) - k).clamp_min(0).sqrt();                 // (L, k)
  auto p = sv / sv.sum(1, /*keepdim=*/true) + 1e-7;
  const auto rank = torch::exp(-(p * p.log()).sum(1));  // (L)
  const auto host = hostValues({maxAbs, ratio, first, rank});
  auto take = [&](int64_t part) {
    return std::vector<float>(host.begin() + part * L, host.begin() + (part + 1) * L);
  };
  return {take(0), take(1), take(2), take(3)};
}

}  // namespace depthlab::probes

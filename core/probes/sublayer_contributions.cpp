// Sublayer contributions; see sublayer_contributions.h.
#include "probes/sublayer_contributions.h"

#include <algorithm>
#include <limits>

#include "probes/probe_tokens.h"
#include "probes/trace_stats.h"

namespace depthlab::probes {

namespace {

// (..., N, C) float64 rows of x (..., B, T, C) at the real tokens.
torch::Tensor tokens(const torch::Tensor& x, const torch::Tensor& real) {
  auto d = x.to(torch::kFloat64);
  return real.defined() ? realRows(d, real) : d.flatten(d.dim() - 3, d.dim() - 2);
}

// {mean ||delta|| / ||stream||, mean cos(delta, stream)} over the rows (dim -2) of delta and
// stream (..., N, C): (...) each; a row whose stream (or delta, for the cosine) is zero is NaN.
std::pair<torch::Tensor, torch::Tensor> relativeAndCos(const torch::Tensor& delta,
                                                       const torch::Tensor& stream) {
  auto dn = delta.norm(2, -1), sn = stream.norm(2, -1);  // (..., N)
  const auto nan = torch::full_like(sn, std::numeric_limits<double>::quiet_NaN());
  auto rel = torch::where(sn > 0, dn / sn, nan);
  auto cos = torch::where(dn * sn > 0, (delta * stream).sum(-1) / (dn * sn), nan);
  return {rel.mean(-1), cos.mean(-1)};
}

bool hasBranches(const model::BlockTrace& b) {
  return b.attnDelta.defined() && b.ffnDelta.defined() && b.attnStream.defined() &&
         b.ffnStream.defined();
}

}  // namespace

SublayerContributions sublayerContributions(const model::ForwardTrace& trace,
                                            const torch::Tensor& real) {
  torch::NoGradGuard ng;
  SublayerContributions out;
  const size_t L = trace.blocks.size();
  const auto any = std::find_if(trace.blocks.begin(), trace.blocks.end(), hasBranches);
  if (any == trace.blocks.end()) return out;
  const auto nan = torch::full({}, std::numeric_limits<double>::quiet_NaN(),
                               any->attnDelta.options().dtype(torch::kFloat64));
  std::vector<torch::Tensor> parts[4];
  if (std::all_of(trace.blocks.begin(), trace.blocks.end(), hasBranches)) {
    // Every block at once: (L, N, C) each, one op per statistic over all blocks.
    auto stacked = [&](torch::Tensor model::BlockTrace::*member) {
      std::vector<torch::Tensor> all;
      for (const auto& b : trace.blocks) all.push_back(b.*member);
      return tokens(torch::stack(all), real);
    };
    const auto [attnRel, attnCos] = relativeAndCos(stacked(&model::BlockTrace::attnDelta),
                                                   stacked(&model::BlockTrace::attnStream));
    const auto [ffnRel, ffnCos] = relativeAndCos(stacked(&model::BlockTrace::ffnDelta),
                                                 stacked(&model::BlockTrace::ffnStream));
    parts[0] = {attnRel};
    parts[1] = {ffnRel};
    parts[2] = {attnCos};
    parts[3] = {ffnCos};
  }
  for (size_t l = 0; l < L && parts[0].empty(); ++l) {
    const auto& b = trace.blocks[l];
    if (!hasBranches(b)) {  // a block left out of the pass (pruned): no values of its own
      for (auto& p : parts) p.push_back(nan);
      continue;
    }
    const auto [attnRel, attnCos] =
        relativeAndCos(tokens(b.attnDelta, real), tokens(b.attnStream, real));
    const auto [ffnRel, ffnCos] =
        relativeAndCos(tokens(b.ffnDelta, real), tokens(b.ffnStream, real));
    parts[0].push_back(attnRel);
    parts[1].push_back(ffnRel);
    parts[2].push_back(attnCos);
    parts[3].push_back(ffnCos);
  }
  auto joined = [](const std::vector<torch::Tensor>& v) {
    return v.size() == 1 && v.front().dim() == 1 ? v.front() : torch::stack(v);  // (L)
  };
  const auto host =
      hostValues({joined(parts[0]), joined(parts[1]), joined(parts[2]), joined(parts[3])});
  auto take = [&](size_t part) {
    return std::vector<float>(host.begin() + static_cast<long>(part * L),
                              host.begin() + static_cast<long>((part + 1) * L));
  };
  out.attnRelative = take(0);
  out.ffnRelative = take(1);
  out.attnCos = take(2);
  out.ffnCos = take(3);
  return out;
}

}  // namespace depthlab::probes

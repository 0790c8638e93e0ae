// Sublayer contributions; see sublayer_contributions.h.
#include "probes/sublayer_contributions.h"

#include <algorithm>
#include <limits>

#include "probes/probe_tokens.h"
#include "probes/trace_stats.h"

namespace depthlab::probes {

namespace {

// (N, C) float64 rows of x at the real tokens.
torch::Tensor tokens(const torch::Tensor& x, const torch::Tensor& real) {
  auto d = x.to(torch::kFloat64);
  return real.defined() ? realRows(d, real) : d.flatten(0, 1);
}

// {mean ||delta|| / ||stream||, mean cos(delta, stream)} over the rows, as 0-d tensors; a row
// whose stream (or delta, for the cosine) is zero counts as NaN.
std::pair<torch::Tensor, torch::Tensor> relativeAndCos(const torch::Tensor& delta,
                                                       const torch::Tensor& stream) {
  auto dn = delta.norm(2, -1), sn = stream.norm(2, -1);  // (N)
  const auto nan = torch::full_like(sn, std::numeric_limits<double>::quiet_NaN());
  auto rel = torch::where(sn > 0, dn / sn, nan);
  auto cos = torch::where(dn * sn > 0, (delta * stream).sum(-1) / (dn * sn), nan);
  return {rel.mean(), cos.mean()};
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
  for (size_t l = 0; l < L; ++l) {
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
  const auto host = hostValues({torch::stack(parts[0]), torch::stack(parts[1]),
                                torch::stack(parts[2]), torch::stack(parts[3])});
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

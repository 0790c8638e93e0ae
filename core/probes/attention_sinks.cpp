// Attention sinks; see attention_sinks.h.
#include "probes/attention_sinks.h"

#include <cmath>

#include "probes/trace_stats.h"

namespace depthlab::probes {

AttentionSinks attentionSinks(const model::ForwardTrace& trace, const torch::Tensor& real) {
  torch::NoGradGuard ng;
  AttentionSinks out;
  const size_t L = trace.blocks.size();
  for (const auto& b : trace.blocks) {
    if (!b.attnEntropy.defined() || !b.attnFirstKey.defined()) return out;
  }
  const auto& first = trace.blocks.front().attnEntropy;  // (B, H, T)
  const int64_t B = first.size(0), T = first.size(2);
  if (T < 2) return out;
  auto queries = real.defined() ? real.to(first.device())
                                : torch::ones({B, T}, first.options().dtype(torch::kBool));
  queries = queries.clone();
  queries.select(1, 0).fill_(false);                           // position 0 left out
  const auto mask = queries.to(torch::kFloat64).unsqueeze(1);  // (B, 1, T)
  // (1); NaN where no query counts (every row padded after its first token), so no statistic
  // of such a pass is a number.
  auto perHeadCount = mask.sum(at::IntArrayRef{0, 2});
  perHeadCount =
      torch::where(perHeadCount > 0, perHeadCount, torch::full_like(perHeadCount, std::nan("")));
  std::vector<torch::Tensor> parts[3];
  for (size_t l = 0; l < L; ++l) {
    const auto e = trace.blocks[l].attnEntropy.to(torch::kFloat64);               // (B, H, T)
    const auto f = trace.blocks[l].attnFirstKey.to(torch::kFloat64);              // (B, H, T)
    const auto headFirst = (f * mask).sum(at::IntArrayRef{0, 2}) / perHeadCount;  // (H)
    parts[0].push_back((e * mask).sum(at::IntArrayRef{0, 2}).div(perHeadCount).mean());
    parts[1].push_back(headFirst.mean());
    parts[2].push_back(
        torch::where(headFirst.isnan(), headFirst, headFirst.gt(kSinkThreshold).to(torch::kFloat64))
            .mean());
  }
  const auto host =
      hostValues({torch::stack(parts[0]), torch::stack(parts[1]), torch::stack(parts[2])});
  auto take = [&](size_t part) {
    return std::vector<float>(host.begin() + static_cast<long>(part * L),
                              host.begin() + static_cast<long>((part + 1) * L));
  };
  out.entropy = take(0);
  out.firstKeyShare = take(1);
  out.sinkRate = take(2);
  return out;
}

}  // namespace depthlab::probes

// See probe_tokens.h.
#include "probes/probe_tokens.h"

namespace depthlab::probes {

namespace {
constexpr int64_t kIgnoreTarget = -100;  // data::kIgnoreTarget

bool anyPad(const torch::Tensor& targets) { return targets.eq(kIgnoreTarget).any().item<bool>(); }
}  // namespace

torch::Tensor realTokens(const torch::Tensor& targets) {
  if (!anyPad(targets)) return {};
  // Right padding: input t is real when t = 0 or target t-1 (= input t) is not a pad.
  auto first = torch::ones({targets.size(0), 1}, targets.options().dtype(torch::kBool));
  return torch::cat({first, targets.slice(1, 0, targets.size(1) - 1).ne(kIgnoreTarget)}, 1);
}

torch::Tensor countedTargets(const torch::Tensor& targets) {
  if (!anyPad(targets)) return {};
  return targets.ne(kIgnoreTarget).sum(1).to(torch::kFloat32);
}

torch::Tensor sequenceLosses(const torch::Tensor& logits, const torch::Tensor& targets,
                             const torch::Tensor& counted) {
  namespace F = torch::nn::functional;
  auto perToken = F::cross_entropy(logits.reshape({-1, logits.size(-1)}).to(torch::kFloat32),
                                   targets.reshape({-1}),
                                   F::CrossEntropyFuncOptions().reduction(torch::kNone));
  auto rows = perToken.view({targets.size(0), -1});  // (B, T); 0 at a pad
  if (!counted.defined()) return rows.mean(1);
  return rows.sum(1) / counted.clamp_min(1.0);
}

double lossOf(const torch::Tensor& logits, const torch::Tensor& targets) {
  // cross_entropy's mean leaves out its ignore_index, -100: the pads.
  return torch::nn::functional::cross_entropy(
             logits.reshape({-1, logits.size(-1)}).to(torch::kFloat32), targets.reshape({-1}))
      .item<double>();
}

torch::Tensor realRows(const torch::Tensor& x, const torch::Tensor& real) {
  const int64_t d = x.dim();
  auto index = real.flatten().nonzero().squeeze(1).to(x.device());  // (N)
  return x.flatten(d - 3, d - 2).index_select(d - 3, index);
}

torch::Tensor lastRealRows(const torch::Tensor& x, const torch::Tensor& real) {
  const int64_t d = x.dim(), B = real.size(0), T = real.size(1);
  auto last = real.sum(1) - 1 + torch::arange(B, real.options().dtype(torch::kInt64)) * T;  // (B)
  return x.flatten(d - 3, d - 2).index_select(d - 3, last.to(x.device()));
}

}  // namespace depthlab::probes

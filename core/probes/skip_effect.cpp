// The skip-effect matrix; see skip_effect.h.
#include "probes/skip_effect.h"

#include <ATen/Parallel.h>

#include <atomic>
#include <limits>

#include "probes/eval_scope.h"
#include "probes/probe_tokens.h"
#include "probes/traced_forward.h"
#include "train/thread_share.h"

namespace depthlab::probes {

namespace {

// (B, T) bool: the positions whose change counts, every real token after the first position.
torch::Tensor countedPositions(const torch::Tensor& targets, int64_t rows, int64_t seqLen,
                               torch::Device device) {
  auto counted = torch::ones({rows, seqLen}, torch::TensorOptions(torch::kBool).device(device));
  counted.narrow(1, 0, 1).fill_(false);
  const auto real = targets.defined() ? realTokens(targets) : torch::Tensor();
  return real.defined() ? counted.logical_and(real) : counted;
}

}  // namespace

namespace {

// (B, T) the relative change of each later block's contribution with block s skipped, for
// l = s+1..L-1: ||Delta'_l - Delta_l|| / ||Delta_l||.
std::vector<torch::Tensor> changesWithout(model::Decoder& model,
                                          const std::vector<torch::Tensor>& x,
                                          const std::vector<torch::Tensor>& delta,
                                          const std::vector<torch::Tensor>& deltaNorm, int s) {
  const int64_t T = x.front().size(1);
  const auto at = [](int i) { return static_cast<size_t>(i); };
  // Block s skipped after the first position: x_{s+1} at t = 0, x_s after.
  auto h = torch::cat({x[at(s + 1)].narrow(1, 0, 1), x[at(s)].narrow(1, 1, T - 1)}, 1);
  std::vector<torch::Tensor> out;
  for (int l = s + 1; l < model->nLayers(); ++l) {
    auto y = model->block(l)->forward(h, model->rope(l));  // (B, T, C)
    out.push_back(((y - h) - delta[at(l)]).norm(2, -1) / deltaNorm[at(l)]);
    h = std::move(y);
  }
  return out;
}

}  // namespace

SkipEffect skipEffect(model::Decoder& model, const torch::Tensor& inputs,
                      const torch::Tensor& targets) {
  torch::NoGradGuard ng;
  EvalScope scope(model);
  const int L = model->nLayers();
  const int64_t B = inputs.size(0), T = inputs.size(1);
  SkipEffect r;
  r.matrix.assign(static_cast<size_t>(L) * L, std::numeric_limits<float>::quiet_NaN());
  if (L < 2 || T < 2) return r;
  model::ForwardTrace trace;
  tracedForward(model, inputs, trace);
  const auto& x = trace.blockInputs;            // L+1 streams (B, T, C)
  std::vector<torch::Tensor> delta, deltaNorm;  // L: (B, T, C), (B, T)
  for (int l = 0; l < L; ++l) {
    delta.push_back(x[static_cast<size_t>(l) + 1] - x[static_cast<size_t>(l)]);
    deltaNorm.push_back(delta.back().norm(2, -1).clamp_min(1e-6));
  }
  // On the CPU the skipped blocks are dealt out over the caller's intra-op threads, one whole
  // row at a time per single-threaded worker (train/thread_share.h), the longest rows first.
  std::vector<std::vector<torch::Tensor>> changes(static_cast<size_t>(L) - 1);
  std::atomic<int> next{0};
  const int workers = x.front().device().is_cpu() ? at::get_num_threads() : 1;
  train::runSideBySide(workers, [&](int) {
    for (int s = next++; s + 1 < L; s = next++)
      changes[static_cast<size_t>(s)] = changesWithout(model, x, delta, deltaNorm, s);
  });
  std::vector<torch::Tensor> all;  // (B, T) each, in (s, l) order
  for (auto& row : changes) all.insert(all.end(), row.begin(), row.end());
  const auto counted = countedPositions(targets, B, T, x.front().device());
  const auto rowCounts = counted.any(1);  // (B): a row with a position that counts
  const auto rows = rowCounts.sum().to(torch::kFloat32).clamp_min(1);  // ()
  const auto worst =
      torch::stack(all)
          .masked_fill(counted.logical_not(), -std::numeric_limits<double>::infinity())
          .amax(2);  // (K, B): the largest change over each row's positions
  const auto cells = worst.masked_fill(rowCounts.logical_not(), 0).sum(1) / rows;  // (K)
  const auto host = cells.to(torch::kCPU, torch::kFloat32).contiguous();
  const float* v = host.data_ptr<float>();
  for (int s = 0, k = 0; s + 1 < L; ++s) {
    for (int l = s + 1; l < L; ++l) r.matrix[static_cast<size_t>(s) * L + l] = v[k++];
  }
  return r;
}

}  // namespace depthlab::probes

// The skip-effect matrix; see skip_effect.h.
#include "probes/skip_effect.h"

#include <limits>

#include "probes/eval_scope.h"
#include "probes/probe_tokens.h"
#include "probes/traced_forward.h"

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
  const auto& x = trace.blockInputs;  // L+1 streams (B, T, C)
  const auto counted = countedPositions(targets, B, T, x.front().device());
  const auto rowCounts = counted.any(1);  // (B): a row with a position that counts
  const auto rows = rowCounts.sum().to(torch::kFloat32).clamp_min(1);  // ()
  std::vector<torch::Tensor> delta, deltaNorm;                         // L: (B, T, C), (B, T)
  for (int l = 0; l < L; ++l) {
    delta.push_back(x[static_cast<size_t>(l) + 1] - x[static_cast<size_t>(l)]);
    deltaNorm.push_back(delta.back().norm(2, -1).clamp_min(1e-6));
  }
  const double minusInf = -std::numeric_limits<double>::infinity();
  std::vector<torch::Tensor> cells;  // () each, on the device, in (s, l) order
  for (int s = 0; s + 1 < L; ++s) {
    // Block s skipped after the first position: x_{s+1} at t = 0, x_s after.
    auto h = torch::cat({x[static_cast<size_t>(s) + 1].narrow(1, 0, 1),
                         x[static_cast<size_t>(s)].narrow(1, 1, T - 1)},
                        1);  // (B, T, C)
    for (int l = s + 1; l < L; ++l) {
      auto y = model->block(l)->forward(h, model->rope(l));  // (B, T, C)
      auto change = ((y - h) - delta[static_cast<size_t>(l)]).norm(2, -1) /
                    deltaNorm[static_cast<size_t>(l)];                           // (B, T)
      auto worst = change.masked_fill(counted.logical_not(), minusInf).amax(1);  // (B)
      cells.push_back(worst.masked_fill(rowCounts.logical_not(), 0).sum() / rows);
      h = std::move(y);
    }
  }
  const auto host = torch::stack(cells).to(torch::kCPU, torch::kFloat32).contiguous();
  const float* v = host.data_ptr<float>();
  for (int s = 0, k = 0; s + 1 < L; ++s) {
    for (int l = s + 1; l < L; ++l) r.matrix[static_cast<size_t>(s) * L + l] = v[k++];
  }
  return r;
}

}  // namespace depthlab::probes

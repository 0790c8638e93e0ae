// The DyT saturation probe; see saturation_probe.h.
#include "probes/saturation_probe.h"

#include <limits>
#include <utility>


namespace depthlab::probes {

namespace {

/// {elements of x (B, T, C) at real tokens with |alpha x| > threshold, elements at real tokens}
/// as () float64 tensors on x's device, by mask: no index and no read of the device.
std::pair<torch::Tensor, torch::Tensor> saturatedCount(const torch::Tensor& x,
                                                       const torch::Tensor& alpha,
                                                       const torch::Tensor& real,
                                                       double threshold) {
  auto over = (x.to(torch::kFloat32) * alpha).abs() > threshold;  // (B, T, C) bool
  if (!real.defined()) {
    return {over.sum().to(torch::kFloat64),
            torch::full({}, static_cast<double>(x.numel()), over.options().dtype(torch::kFloat64))};
  }
  auto mask = real.to(x.device()).unsqueeze(-1);  // (B, T, 1)
  return {(over & mask).sum().to(torch::kFloat64),
          mask.sum().to(torch::kFloat64) * static_cast<double>(x.size(-1))};
}

}  // namespace

std::vector<float> dytSaturation(model::Decoder& model, const model::ForwardTrace& trace,
                                 const torch::Tensor& real, double threshold) {
  torch::NoGradGuard ng;
  const int L = model->nLayers();
  std::vector<torch::Tensor> counts;  // per DyT block: () saturated, () all
  std::vector<int> blocks;
  for (int l = 0; l < L && static_cast<size_t>(l) < trace.blocks.size(); ++l) {
    auto& block = model->block(l);
    const auto& bt = trace.blocks[static_cast<size_t>(l)];
    torch::Tensor saturated, all;  // () each, on the model's device: no copy per block
    auto add = [&](const torch::Tensor& in, const model::Norm& norm) {
      if (!in.defined() || !norm || !norm->isTanh()) return;
      auto [over, n] = saturatedCount(in, norm->alpha, real, threshold);
      saturated = saturated.defined() ? saturated + over : over;
      all = all.defined() ? all + n : n;
    };
    add(bt.attnNormIn, block->input_layernorm);
    add(bt.ffnNormIn, block->post_attention_layernorm);
    if (!saturated.defined()) continue;
    counts.push_back(saturated / all.clamp_min(1.0));
    blocks.push_back(l);
  }
  if (blocks.empty()) return {};
  std::vector<float> share(static_cast<size_t>(L), std::numeric_limits<float>::quiet_NaN());
  auto host = torch::stack(counts).to(torch::kCPU, torch::kFloat64).contiguous();  // one copy
  for (size_t i = 0; i < blocks.size(); ++i) {
    share[static_cast<size_t>(blocks[i])] = static_cast<float>(host[i].item<double>());
  }
  return share;
}

std::optional<double> dytFinalSaturation(model::Decoder& model, const model::ForwardTrace& trace,
                                         const torch::Tensor& real, double threshold) {
  torch::NoGradGuard ng;
  if (!model->norm || !model->norm->isTanh() || trace.blockInputs.empty()) return std::nullopt;
  auto [over, n] = saturatedCount(trace.blockInputs.back(), model->norm->alpha, real, threshold);
  auto both = torch::stack({over, n}).to(torch::kCPU);  // one copy
  const double all = both[1].item<double>();
  if (all == 0) return std::nullopt;
  return both[0].item<double>() / all;
}

}  // namespace depthlab::probes

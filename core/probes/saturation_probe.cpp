// The DyT saturation probe; see saturation_probe.h.
#include "probes/saturation_probe.h"

#include <limits>

#include "probes/probe_tokens.h"

namespace depthlab::probes {

std::vector<float> dytSaturation(model::Decoder& model, const model::ForwardTrace& trace,
                                 const torch::Tensor& real, double threshold) {
  torch::NoGradGuard ng;
  const int L = model->nLayers();
  std::vector<torch::Tensor> counts;  // per DyT block: () saturated, () all
  std::vector<int> blocks;
  for (int l = 0; l < L && static_cast<size_t>(l) < trace.blocks.size(); ++l) {
    auto& block = model->block(l);
    const auto& bt = trace.blocks[static_cast<size_t>(l)];
    torch::Tensor saturated;  // () on the model's device: no copy per block
    double all = 0;
    auto add = [&](const torch::Tensor& in, const model::Norm& norm) {
      if (!in.defined() || !norm || !norm->isTanh()) return;
      auto x = real.defined() ? realRows(in, real) : in;  // (N, C) or (B, T, C)
      auto over = ((x.to(torch::kFloat32) * norm->alpha).abs() > threshold)
                      .sum()
                      .to(torch::kFloat64);  // ()
      saturated = saturated.defined() ? saturated + over : over;
      all += static_cast<double>(x.numel());
    };
    add(bt.attnNormIn, block->input_layernorm);
    add(bt.ffnNormIn, block->post_attention_layernorm);
    if (!saturated.defined() || all == 0) continue;
    counts.push_back(saturated / all);
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
  const auto& in = trace.blockInputs.back();          // (B, T, C)
  auto x = real.defined() ? realRows(in, real) : in;  // (N, C)
  if (x.numel() == 0) return std::nullopt;
  auto over = ((x.to(torch::kFloat32) * model->norm->alpha).abs() > threshold).sum();
  return over.to(torch::kCPU, torch::kFloat64).item<double>() / static_cast<double>(x.numel());
}

}  // namespace depthlab::probes

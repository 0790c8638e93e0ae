// The decoder's building blocks: RMSNorm (fp32 inside) / LayerNorm, RoPE, causal multi-head
// attention and the SwiGLU MLP. No biases anywhere. Names follow Hugging Face Llama
// (q_proj, ..., gate_proj) so checkpoints map one to one.
// Legend: B batch, T time, C model width, H heads, D = C/H head dim, F FFN width.
#pragma once

#include <torch/torch.h>

#include <utility>

namespace depthlab::model {

/// y = x / sqrt(mean(x^2) + eps) * weight (RMSNorm, computed in fp32), or LayerNorm with
/// weight and bias when `layerNorm`; times `scale` (the LNS factor, a constant) when given.
/// RMSNorm on CPU runs as one fused kernel (model/fused_ops.h), on CUDA as DepthLab's kernel
/// when those are on (model/cuda_ops.h).
class NormImpl : public torch::nn::Module {
 public:
  NormImpl(int64_t dim, double eps, bool layerNorm);
  torch::Tensor forward(const torch::Tensor& x, double scale = 1.0);  // (B, T, C) -> (B, T, C)
  /// The same values, for a caller that only feeds them to a matmul: under CUDA autocast the
  /// result may come already cast to the autocast dtype (the cast fused into the norm).
  torch::Tensor forwardIntoMatmul(const torch::Tensor& x, double scale = 1.0);
  /// {sum = x + residual, this norm of sum (forwardIntoMatmul's when intoMatmul)}; residual
  /// undefined: {x, the norm of x}. On CUDA with the kernels on, one kernel each way.
  std::pair<torch::Tensor, torch::Tensor> addForward(const torch::Tensor& x,
                                                     const torch::Tensor& residual, double scale,
                                                     bool intoMatmul);

  torch::Tensor weight, bias;

 private:
  torch::Tensor compositeRms(const torch::Tensor& x, double scale) const;
  /// DepthLab's CUDA RMSNorm takes x: an RMSNorm, the kernels on, float32 x and weight on CUDA.
  bool cudaRmsApplies(const torch::Tensor& x) const;
  double m_eps;
  bool m_layerNorm;
};
TORCH_MODULE(Norm);

/// Rotary position embedding, rotate-half convention, cached cos/sin for up to maxLen.
class Rope {
 public:
  Rope(int64_t headDim, int64_t maxLen, double base);
  torch::Tensor apply(const torch::Tensor& x) const;  // (B, H, T, D) -> (B, H, T, D)
  /// Splits heads and rotates in one step (fused on CPU): (B, T, H*D) -> (B, H, T, D).
  torch::Tensor applySplitHeads(const torch::Tensor& x, int64_t heads) const;
  void to(torch::Device device);

 private:
  torch::Tensor m_cos, m_sin;  // (maxLen, D)
};

class AttentionImpl : public torch::nn::Module {
 public:
  AttentionImpl(int64_t dModel, int64_t nHeads);
  torch::Tensor forward(const torch::Tensor& x, const Rope& rope);  // (B,T,C) -> (B,T,C)

  torch::nn::Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};

 private:
  int64_t m_heads, m_headDim;
  torch::Tensor m_mask;  // (T, T) additive causal mask, built on first use (not state)
};
TORCH_MODULE(Attention);

/// down(silu(gate(x)) * up(x))
class SwiGluImpl : public torch::nn::Module {
 public:
  SwiGluImpl(int64_t dModel, int64_t dFF);
  torch::Tensor forward(const torch::Tensor& x);  // (B,T,C) -> (B,T,C)

  torch::nn::Linear gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};
};
TORCH_MODULE(SwiGlu);

}  // namespace depthlab::model

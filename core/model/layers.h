// The decoder's building blocks: RMSNorm (fp32 inside) / LayerNorm, RoPE, causal multi-head
// attention (grouped-query when there are fewer key/value heads, q/k/v biases when asked: what
// Llama, Mistral and Qwen2 checkpoints need) and the SwiGLU MLP. Names follow Hugging Face Llama
// (q_proj, ..., gate_proj) so checkpoints map one to one. Weights may be stored in a narrower
// dtype than the activations (an imported bf16 model): each matmul then converts its weight for
// that call only (applyLinear), so no full-precision copy of the model is ever held.
// Legend: B batch, T time, C model width, H heads, K key/value heads, D head dim, F FFN width.
#pragma once

#include <torch/torch.h>

#include <utility>

namespace depthlab::model {

/// `w` as float32 when x is float32 and w is stored in bf16/fp16 (for this call only), else w.
torch::Tensor weightFor(const torch::Tensor& w, const torch::Tensor& x);
/// l(x) with l's weight (and bias) through weightFor.
torch::Tensor applyLinear(const torch::nn::Linear& l, const torch::Tensor& x);

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
  /// Splits heads and rotates in one step (one kernel on CUDA): (B, T, H*D) -> (B, H, T, D).
  torch::Tensor applySplitHeads(const torch::Tensor& x, int64_t heads) const;
  /// CPU fused path only: one q/k/v product (B, T, (H + 2K) D) -> {q (B, H, T, D),
  /// k (B, K, T, D), v (B, K, T, D)}, RoPE on q and k (model/packed_ops.h).
  std::vector<torch::Tensor> applyQkvHeads(const torch::Tensor& qkv, int64_t heads,
                                           int64_t kvHeads) const;
  void to(torch::Device device);

 private:
  torch::Tensor m_cos, m_sin;  // (maxLen, D)
};

struct AttentionShape {
  int64_t dModel = 0, heads = 0, kvHeads = 0, headDim = 0;  // kvHeads divides heads
  bool qkvBias = false;
};

class AttentionImpl : public torch::nn::Module {
 public:
  explicit AttentionImpl(const AttentionShape& shape);
  AttentionImpl(int64_t dModel, int64_t nHeads)
      : AttentionImpl(AttentionShape{dModel, nHeads, nHeads, dModel / nHeads, false}) {}
  torch::Tensor forward(const torch::Tensor& x, const Rope& rope);  // (B,T,C) -> (B,T,C)

  // q: C -> H*D, k and v: C -> K*D, o: H*D -> C
  torch::nn::Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};

 private:
  int64_t m_heads, m_kvHeads, m_headDim;
  torch::Tensor m_mask;  // (T, T) additive causal mask, built on first use (not state; guarded
                         // in forward, which threads may call side by side)
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

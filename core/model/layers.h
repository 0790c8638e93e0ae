// The decoder's building blocks: RMSNorm (fp32 inside) / LayerNorm (with bias), RoPE (scaled as
// rope_scaling.h says; over a head's first dims only when partial, or none), causal multi-head
// attention (grouped-query when there are fewer key/value heads, q/k/v and output biases, q/k
// RMSNorm per head or over the projection when asked: what Llama, Mistral, Qwen2/3, OLMo 2,
// Phi-3, GPT-2 and GPT-NeoX checkpoints need) and the MLP (SwiGLU; GeGLU; or ungated with biases,
// GPT-2 / GPT-NeoX). Names follow Hugging Face Llama (q_proj, ..., gate_proj) so checkpoints map
// one to one. Weights may be stored in a narrower dtype than the activations (an imported bf16
// model): each matmul then converts its weight for that call only (applyLinear), so no
// full-precision copy of the model is ever held. What imported architectures add takes the
// plain LibTorch path; DepthLab's own runs keep the fused CPU / CUDA kernels.
// Legend: B batch, T time, C model width, H heads, K key/value heads, D head dim, F FFN width,
// R rotated dims of a head.
#pragma once

#include <torch/torch.h>

#include <string>
#include <utility>

#include "model/model_config.h"

namespace depthlab::model {

/// `w` as float32 when x is float32 and w is stored in bf16/fp16 (for this call only), else w.
torch::Tensor weightFor(const torch::Tensor& w, const torch::Tensor& x);
/// l(x) with l's weight (and bias) through weightFor.
torch::Tensor applyLinear(const torch::nn::Linear& l, const torch::Tensor& x);

/// y = x / sqrt(mean(x^2) + eps) * weight (RMSNorm, computed in fp32), or LayerNorm with
/// weight and bias when `layerNorm`; times `scale` (the LNS factor, a constant) when given.
/// RMSNorm on CPU runs as one fused kernel (model/fused_ops.h), on CUDA as DepthLab's kernel
/// when those are on (model/cuda_ops.h).
/// With `tanhAlpha` > 0 it is DyT instead (arXiv:2503.10622): y = weight * tanh(alpha x)
/// (+ bias when `layerNorm`), alpha a learnable scalar initialised to tanhAlpha; no statistics.
class NormImpl : public torch::nn::Module {
 public:
  NormImpl(int64_t dim, double eps, bool layerNorm, double tanhAlpha = 0.0);
  torch::Tensor forward(const torch::Tensor& x, double scale = 1.0);  // (B, T, C) -> (B, T, C)
  /// The same values, for a caller that only feeds them to a matmul: under CUDA autocast the
  /// result may come already cast to the autocast dtype (the cast fused into the norm).
  torch::Tensor forwardIntoMatmul(const torch::Tensor& x, double scale = 1.0);
  /// {sum = x + residual, this norm of sum (forwardIntoMatmul's when intoMatmul)}; residual
  /// undefined: {x, the norm of x}. On CUDA with the kernels on, one kernel each way.
  std::pair<torch::Tensor, torch::Tensor> addForward(const torch::Tensor& x,
                                                     const torch::Tensor& residual, double scale,
                                                     bool intoMatmul);

  /// True for DyT (then `alpha` is defined).
  bool isTanh() const { return m_tanh; }

  torch::Tensor weight, bias;
  torch::Tensor alpha;  // DyT only: () learnable scalar

 private:
  torch::Tensor compositeRms(const torch::Tensor& x, double scale) const;
  /// DyT: weight * tanh(alpha x) (+ bias), times scale; (..., C) -> (..., C).
  torch::Tensor dyt(const torch::Tensor& x, double scale) const;
  /// A plain RMSNorm: not LayerNorm, not DyT (the fused CPU and CUDA kernels' case).
  bool rms() const { return !m_layerNorm && !m_tanh; }
  /// DepthLab's CUDA RMSNorm takes x: an RMSNorm, the kernels on, float32 x and weight on CUDA.
  bool cudaRmsApplies(const torch::Tensor& x) const;
  double m_eps;
  bool m_layerNorm;
  bool m_tanh = false;
};
TORCH_MODULE(Norm);

/// Rotary position embedding, rotate-half convention, cached cos/sin for up to maxLen.
/// With a scaling (rope_scaling.h) the tables come from its frequencies, times its attention
/// factor; longrope keeps a second pair for sequences longer than its original context.
/// Partial (GPT-NeoX, rotaryDims R < D): the first R dims of each head rotate as a head of R
/// would, the rest pass through; R = 0: no rotation at all (GPT-2's learned positions).
class Rope {
 public:
  Rope(int64_t headDim, int64_t maxLen, double base);
  Rope(int64_t headDim, int64_t maxLen, double base, const RopeScaling& scaling);
  Rope(int64_t headDim, int64_t maxLen, double base, const RopeScaling& scaling,
       int64_t rotaryDims);
  /// True when every dim of a head rotates (the fused kernels' case).
  bool rotatesWholeHead() const { return m_rotaryDims == m_headDim; }
  torch::Tensor apply(const torch::Tensor& x) const;  // (B, H, T, D) -> (B, H, T, D)
  /// Splits heads and rotates in one step (one kernel on CUDA): (B, T, H*D) -> (B, H, T, D).
  torch::Tensor applySplitHeads(const torch::Tensor& x, int64_t heads) const;
  /// CPU fused path only: one q/k/v product (B, T, (H + 2K) D) -> {q (B, H, T, D),
  /// k (B, K, T, D), v (B, K, T, D)}, RoPE on q and k (model/packed_ops.h).
  std::vector<torch::Tensor> applyQkvHeads(const torch::Tensor& qkv, int64_t heads,
                                           int64_t kvHeads) const;
  void to(torch::Device device);

 private:
  /// x rotated over all its last dim (D, or R of a partial rope): (B, H, T, R) -> (B, H, T, R).
  torch::Tensor rotate(const torch::Tensor& x) const;
  /// The tables for a sequence of T positions: {cos, sin} (maxLen, R) each.
  std::pair<const torch::Tensor&, const torch::Tensor&> tables(int64_t T) const;
  torch::Tensor m_cos, m_sin;               // (maxLen, R)
  torch::Tensor m_cosLong, m_sinLong;       // (maxLen, R), longrope past m_longAbove positions
  int64_t m_longAbove = 0;                  // 0: one pair of tables
  int64_t m_headDim = 0, m_rotaryDims = 0;  // D, R
};

struct AttentionShape {
  int64_t dModel = 0, heads = 0, kvHeads = 0, headDim = 0;  // kvHeads divides heads
  bool qkvBias = false;
  bool outBias = false;          // a bias on o_proj (GPT-2, GPT-NeoX)
  QkNorm qkNorm = QkNorm::None;  // RMSNorm of q and k before RoPE
  bool vNorm = false;            // RMSNorm of each head's values too (HybridNorm's QKV-norm)
  double normEps = 1e-6;         // its epsilon
  double scale = 0.0;            // q.k scale; 0: 1/sqrt(headDim)
  double softcap = 0.0;          // > 0: scores -> softcap * tanh(scores / softcap)
};

/// What a traced pass reads of the attention probabilities, reduced at once (the (B, H, T, T)
/// probabilities themselves are not kept): per row, head and query position, the entropy of
/// the query's distribution over its keys and the probability on the first key.
struct AttentionProbe {
  torch::Tensor entropy;   // (B, H, T) float32, nats
  torch::Tensor firstKey;  // (B, H, T) float32
};

class AttentionImpl : public torch::nn::Module {
 public:
  explicit AttentionImpl(const AttentionShape& shape);
  AttentionImpl(int64_t dModel, int64_t nHeads)
      : AttentionImpl(AttentionShape{dModel, nHeads, nHeads, dModel / nHeads, false}) {}
  /// (B,T,C) -> (B,T,C). With `probe`, also the probabilities' entropy and first-key share,
  /// from softmax(softcap(q k^T * scale) + causal mask) computed plainly (the output is the
  /// same path's as without).
  torch::Tensor forward(const torch::Tensor& x, const Rope& rope, AttentionProbe* probe = nullptr);

  // q: C -> H*D, k and v: C -> K*D, o: H*D -> C
  torch::nn::Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};
  Norm q_norm{nullptr}, k_norm{nullptr};  // qkNorm only: weights (D) per head, or (H*D), (K*D)
  Norm v_norm{nullptr};                   // vNorm only: weights (D), per head

 private:
  /// proj(x) through `norm` (when there is one) and RoPE: (B, T, C) -> (B, heads, T, D).
  torch::Tensor rotatedHeads(const torch::nn::Linear& proj, Norm& norm, const torch::Tensor& x,
                             const Rope& rope, int64_t heads);
  /// softmax(softcap(q k^T * scale) + causal mask) v, plainly (imported Gemma only):
  /// q, k, v (B, H, T, D) -> (B, H, T, D).
  torch::Tensor cappedAttention(const torch::Tensor& q, const torch::Tensor& k,
                                const torch::Tensor& v) const;
  /// The attention probabilities of q, k (B, H, T, D): (B, H, T, T), as cappedAttention's.
  torch::Tensor probabilities(const torch::Tensor& q, const torch::Tensor& k) const;
  /// v_proj(x) split into heads, each head's values RMSNorm'd when vNorm: (B, T, C) -> (B, K, T,
  /// D).
  torch::Tensor valueHeads(const torch::Tensor& x);
  QkNorm m_qkNorm = QkNorm::None;
  double m_scale = 0.0, m_softcap = 0.0;
  int64_t m_heads, m_kvHeads, m_headDim;
  torch::Tensor m_mask;  // (T, T) additive causal mask, built on first use (not state; guarded
                         // in forward, which threads may call side by side)
};
TORCH_MODULE(Attention);

/// The MLP's nonlinearity: silu, gelu with the tanh approximation (Gemma's gelu_pytorch_tanh,
/// GPT-2's gelu_new), exact gelu (GPT-NeoX), relu.
enum class Activation { Silu, GeluTanh, Gelu, Relu };
/// "silu" | "gelu_tanh" | "gelu" | "relu" (ModelConfig::activation); throws on anything else.
Activation activationFromString(const std::string& name);

struct MlpShape {
  int64_t dModel = 0, dFF = 0;
  Activation activation = Activation::Silu;
  bool gated = true;  // false: down(act(up(x))), no gate_proj (GPT-2, GPT-NeoX)
  bool bias = false;  // biases on every projection (GPT-2, GPT-NeoX)
};

/// The MLP: down(silu(gate(x)) * up(x)) (SwiGLU, DepthLab's own, fused kernels); another
/// activation in the gate (GeGLU: Gemma); ungated, down(act(up(x))) with biases (GPT-2, GPT-NeoX).
class SwiGluImpl : public torch::nn::Module {
 public:
  explicit SwiGluImpl(const MlpShape& shape);
  SwiGluImpl(int64_t dModel, int64_t dFF, bool geluTanh = false)
      : SwiGluImpl(MlpShape{dModel, dFF, geluTanh ? Activation::GeluTanh : Activation::Silu}) {}
  torch::Tensor forward(const torch::Tensor& x);  // (B,T,C) -> (B,T,C)

  torch::nn::Linear gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};  // gate: gated only

 private:
  torch::Tensor activate(const torch::Tensor& x) const;
  Activation m_activation = Activation::Silu;
  bool m_plain = false;  // not SwiGLU without biases: no fused kernels
};
TORCH_MODULE(SwiGlu);

}  // namespace depthlab::model

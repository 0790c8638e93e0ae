// Decoder building blocks; see layers.h.
#include "model/layers.h"

#include <cmath>
#include <limits>
#include <mutex>
#include <stdexcept>

#include "model/causal_attention.h"
#include "model/cuda_ops.h"
#include "model/fused_ops.h"
#include "model/packed_ops.h"

namespace depthlab::model {

namespace F = torch::nn::functional;

torch::Tensor weightFor(const torch::Tensor& w, const torch::Tensor& x) {
  const auto t = w.scalar_type();
  const bool narrow =
      x.scalar_type() == torch::kFloat32 && (t == torch::kBFloat16 || t == torch::kFloat16);
  return narrow ? w.to(torch::kFloat32) : w;
}

torch::Tensor applyLinear(const torch::nn::Linear& l, const torch::Tensor& x) {
  // what Linear::forward does, with a narrow stored weight widened for this call
  return torch::linear(x, weightFor(l->weight, x),
                       l->bias.defined() ? weightFor(l->bias, x) : torch::Tensor());
}

NormImpl::NormImpl(int64_t dim, double eps, bool layerNorm, double tanhAlpha)
    : m_eps(eps), m_layerNorm(layerNorm), m_tanh(tanhAlpha > 0) {
  weight = register_parameter("weight", torch::ones({dim}));
  if (layerNorm) bias = register_parameter("bias", torch::zeros({dim}));
  if (m_tanh) alpha = register_parameter("alpha", torch::full({}, tanhAlpha));
}

torch::Tensor NormImpl::dyt(const torch::Tensor& x, double scale) const {
  auto y = weightFor(weight, x) * torch::tanh(alpha * x);  // (..., C)
  if (bias.defined()) y = y + weightFor(bias, x);
  return scale == 1.0 ? y : y * scale;
}

torch::Tensor NormImpl::forward(const torch::Tensor& x, double scale) {
  if (m_tanh) return dyt(x, scale);
  // A weight stored narrower than x (an imported bf16 model): the fused and composite RMSNorm
  // widen it themselves (.to / type promotion); LayerNorm needs it widened.
  if (m_layerNorm) {
    auto y = torch::layer_norm(x, {x.size(-1)}, weightFor(weight, x), weightFor(bias, x), m_eps);
    return scale == 1.0 ? y : y * scale;
  }
  if (fusedOpsApply(x)) return fusedRmsNorm(x, weight, m_eps, scale);
  if (cudaRmsApplies(x)) return cudaRmsNorm(x, weight, m_eps, scale);
  return compositeRms(x, scale);
}

bool NormImpl::cudaRmsApplies(const torch::Tensor& x) const {
  return rms() && cudaOpsApply(x) && x.scalar_type() == torch::kFloat32 &&
         weight.scalar_type() == torch::kFloat32;
}

torch::Tensor NormImpl::forwardIntoMatmul(const torch::Tensor& x, double scale) {
  if (cudaRmsApplies(x)) return cudaRmsNorm(x, weight, m_eps, scale, cudaAutocastMatmulDtype());
  return forward(x, scale);
}

std::pair<torch::Tensor, torch::Tensor> NormImpl::addForward(const torch::Tensor& x,
                                                             const torch::Tensor& residual,
                                                             double scale, bool intoMatmul) {
  if (!residual.defined()) return {x, intoMatmul ? forwardIntoMatmul(x, scale) : forward(x, scale)};
  if (cudaResidualFusionEnabled() && cudaRmsApplies(x) && residual.sizes() == x.sizes() &&
      residual.device() == x.device()) {
    const auto out =
        intoMatmul ? cudaAutocastMatmulDtype().value_or(torch::kFloat32) : torch::kFloat32;
    if (residual.scalar_type() == out) return cudaAddRmsNorm(x, residual, weight, m_eps, scale);
  }
  if (rms() && fusedOpsApply(x) && residual.sizes() == x.sizes() &&
      residual.scalar_type() == x.scalar_type() && residual.device() == x.device()) {
    return fusedAddRmsNorm(x, residual, weight, m_eps, scale);
  }
  auto sum = x + residual;
  return {sum, intoMatmul ? forwardIntoMatmul(sum, scale) : forward(sum, scale)};
}

torch::Tensor NormImpl::compositeRms(const torch::Tensor& x, double scale) const {
  auto xf = x.to(torch::kFloat32);
  auto normed = xf * torch::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + m_eps);
  auto y = weight * normed.to(x.scalar_type());
  return scale == 1.0 ? y : y * scale;
}

Rope::Rope(int64_t headDim, int64_t maxLen, double base) {
  auto inv = torch::pow(base, -torch::arange(0, headDim, 2, torch::kFloat64) / headDim);  // (D/2)
  auto t = torch::arange(maxLen, torch::kFloat64);                                        // (T)
  auto freqs = torch::outer(t, inv);          // (T, D/2)
  auto emb = torch::cat({freqs, freqs}, -1);  // (T, D)
  m_cos = emb.cos().to(torch::kFloat32);
  m_sin = emb.sin().to(torch::kFloat32);
  m_headDim = m_rotaryDims = headDim;
}

Rope::Rope(int64_t headDim, int64_t maxLen, double base, const RopeScaling& scaling)
    : Rope(headDim, maxLen, base) {
  if (scaling.isDefault()) return;  // the tables above, bit for bit
  auto build = [&](bool longContext, torch::Tensor& cos, torch::Tensor& sin) {
    const auto f = ropeInverseFrequencies(scaling, headDim, base, longContext);
    auto inv = torch::tensor(f, torch::kFloat64);                            // (D/2)
    auto freqs = torch::outer(torch::arange(maxLen, torch::kFloat64), inv);  // (T, D/2)
    auto emb = torch::cat({freqs, freqs}, -1);                               // (T, D)
    cos = (emb.cos() * scaling.attentionFactor).to(torch::kFloat32);
    sin = (emb.sin() * scaling.attentionFactor).to(torch::kFloat32);
  };
  build(false, m_cos, m_sin);
  if (scaling.hasLongFactors() && maxLen > scaling.originalMaxPositions) {
    build(true, m_cosLong, m_sinLong);
    m_longAbove = scaling.originalMaxPositions;
  }
}

Rope::Rope(int64_t headDim, int64_t maxLen, double base, const RopeScaling& scaling,
           int64_t rotaryDims)
    : Rope(rotaryDims, maxLen, base, scaling) {  // the tables of a head of R dims
  m_headDim = headDim;
}

std::pair<const torch::Tensor&, const torch::Tensor&> Rope::tables(int64_t T) const {
  if (m_longAbove > 0 && T > m_longAbove) return {m_cosLong, m_sinLong};
  return {m_cos, m_sin};
}

void Rope::to(torch::Device device) {
  m_cos = m_cos.to(device);
  m_sin = m_sin.to(device);
  if (m_cosLong.defined()) {
    m_cosLong = m_cosLong.to(device);
    m_sinLong = m_sinLong.to(device);
  }
}

torch::Tensor Rope::applySplitHeads(const torch::Tensor& x, int64_t heads) const {
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2);
  if (cudaOpsApply(x) && rotatesWholeHead()) {
    const auto [cos, sin] = tables(T);
    return cudaRopeSplitHeads(x, cos, sin, heads);
  }
  return apply(x.view({B, T, heads, C / heads}).transpose(1, 2));
}

std::vector<torch::Tensor> Rope::applyQkvHeads(const torch::Tensor& qkv, int64_t heads,
                                               int64_t kvHeads) const {
  const int64_t T = qkv.size(1);
  const auto [cos, sin] = tables(T);
  return fusedQkvHeads(qkv, cos.slice(0, 0, T), sin.slice(0, 0, T), heads, kvHeads);
}

torch::Tensor Rope::apply(const torch::Tensor& x) const {
  if (rotatesWholeHead()) return rotate(x);
  if (m_rotaryDims == 0) return x;  // no rotary positions (GPT-2)
  // GPT-NeoX: the first R dims rotate as a whole head of R would, the rest pass through.
  auto rotated = rotate(x.slice(-1, 0, m_rotaryDims));                     // (B, H, T, R)
  return torch::cat({rotated, x.slice(-1, m_rotaryDims, m_headDim)}, -1);  // (B, H, T, D)
}

torch::Tensor Rope::rotate(const torch::Tensor& x) const {
  const int64_t T = x.size(2), D = x.size(3);
  const auto [cosTable, sinTable] = tables(T);
  auto cos = cosTable.slice(0, 0, T).to(x.scalar_type());  // (T, D)
  auto sin = sinTable.slice(0, 0, T).to(x.scalar_type());
  auto x1 = x.slice(-1, 0, D / 2);
  auto x2 = x.slice(-1, D / 2, D);
  auto rotated = torch::cat({-x2, x1}, -1);  // rotate_half
  return x * cos + rotated * sin;
}

AttentionImpl::AttentionImpl(const AttentionShape& a)
    : m_qkNorm(a.qkNorm),
      m_scale(a.scale),
      m_softcap(a.softcap),
      m_heads(a.heads),
      m_kvHeads(a.kvHeads),
      m_headDim(a.headDim) {
  auto lin = [&](const char* name, int64_t in, int64_t out, bool bias) {
    return register_module(name, torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(bias)));
  };
  q_proj = lin("q_proj", a.dModel, a.heads * a.headDim, a.qkvBias);
  k_proj = lin("k_proj", a.dModel, a.kvHeads * a.headDim, a.qkvBias);
  v_proj = lin("v_proj", a.dModel, a.kvHeads * a.headDim, a.qkvBias);
  o_proj = lin("o_proj", a.heads * a.headDim, a.dModel, a.outBias);
  if (a.qkNorm != QkNorm::None) {
    const bool perHead = a.qkNorm == QkNorm::PerHead;
    q_norm = register_module("q_norm",
                             Norm(perHead ? a.headDim : a.heads * a.headDim, a.normEps, false));
    k_norm = register_module("k_norm",
                             Norm(perHead ? a.headDim : a.kvHeads * a.headDim, a.normEps, false));
  }
  if (a.vNorm) v_norm = register_module("v_norm", Norm(a.headDim, a.normEps, false));
}

torch::Tensor AttentionImpl::valueHeads(const torch::Tensor& x) {
  const int64_t B = x.size(0), T = x.size(1);
  auto v = applyLinear(v_proj, x);                                   // (B, T, K * D)
  if (v_norm) v = v_norm(v.reshape({B, T * m_kvHeads, m_headDim}));  // each head alone
  return v.view({B, T, m_kvHeads, m_headDim}).transpose(1, 2);       // (B, K, T, D)
}

torch::Tensor AttentionImpl::rotatedHeads(const torch::nn::Linear& proj, Norm& norm,
                                          const torch::Tensor& x, const Rope& rope, int64_t heads) {
  auto y = applyLinear(proj, x);  // (B, T, heads * D)
  if (m_qkNorm == QkNorm::Whole) y = norm(y);
  if (m_qkNorm == QkNorm::PerHead) {  // each head's D values alone: (B, T * heads, D)
    const int64_t B = y.size(0), T = y.size(1);
    y = norm(y.reshape({B, T * heads, m_headDim})).view({B, T, heads * m_headDim});
  }
  return rope.applySplitHeads(y, heads);  // (B, heads, T, D)
}

torch::Tensor AttentionImpl::forward(const torch::Tensor& x, const Rope& rope,
                                     AttentionProbe* probe) {
  const int64_t B = x.size(0), T = x.size(1);
  torch::Tensor q, k, v;  // (B, H, T, D), (B, K, T, D), (B, K, T, D)
  if (fusedOpsApply(x) && m_qkNorm == QkNorm::None && !v_norm && rope.rotatesWholeHead()) {
    // One GEMM for q, k and v on the CPU: the input is packed once, and backward computes the
    // input's gradient in one GEMM instead of three and two adds. The product goes whole
    // into the head split (RoPE on q and k), whose backward writes one packed gradient.
    auto w = torch::cat({weightFor(q_proj->weight, x), weightFor(k_proj->weight, x),
                         weightFor(v_proj->weight, x)});  // (HD + 2 KD, C)
    auto b = q_proj->bias.defined()
                 ? torch::cat({weightFor(q_proj->bias, x), weightFor(k_proj->bias, x),
                               weightFor(v_proj->bias, x)})
                 : torch::Tensor();
    auto heads = rope.applyQkvHeads(torch::linear(x, w, b), m_heads, m_kvHeads);
    q = heads[0];
    k = heads[1];
    v = heads[2];
  } else {
    q = rotatedHeads(q_proj, q_norm, x, rope, m_heads);    // (B, H, T, D)
    k = rotatedHeads(k_proj, k_norm, x, rope, m_kvHeads);  // (B, K, T, D)
    v = valueHeads(x);                                     // (B, K, T, D)
  }
  if (m_kvHeads != m_heads) {  // grouped-query: each key/value head serves H/K query heads
    k = k.repeat_interleave(m_heads / m_kvHeads, 1);  // (B, H, T, D)
    v = v.repeat_interleave(m_heads / m_kvHeads, 1);  // (B, H, T, D)
  }
  if (probe) {
    torch::NoGradGuard ng;
    auto p = probabilities(q.to(torch::kFloat32), k.to(torch::kFloat32));  // (B, H, T, T)
    probe->entropy = -torch::xlogy(p, p).sum(-1);                          // (B, H, T)
    probe->firstKey = p.select(-1, 0).contiguous();                        // (B, H, T)
  }
  if (m_scale > 0 || m_softcap > 0) {
    auto y = cappedAttention(q, k, v);  // (B, H, T, D)
    return applyLinear(o_proj, y.transpose(1, 2).contiguous().view({B, T, m_heads * m_headDim}));
  }
#if TORCH_VERSION_MAJOR >= 2
  auto y = at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true);  // (B,H,T,D)
#else
  const int64_t BH = B * m_heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(m_headDim));
  if (fusedOpsApply(q)) {  // blocks of query rows; the GEMMs skip the masked triangle
    return applyLinear(o_proj, fusedCausalAttention(q, k, v, scale));  // (B, T, H D)
  }
  // One batched GEMM computes mask + q k^T / sqrt(D): the scale and the cached additive
  // causal mask (future positions -inf) ride along in baddbmm's alpha and beta.
  torch::Tensor mask;  // (T, T)
  // Forward passes run side by side on one model (the row split, the pruning sweeps): the
  // first ones to arrive must not build the cache at the same time.
  {
    static std::mutex maskMutex;
    std::lock_guard<std::mutex> lock(maskMutex);
    if (!m_mask.defined() || m_mask.size(0) < T || m_mask.device() != x.device() ||
        m_mask.scalar_type() != q.scalar_type()) {
      m_mask = torch::full({T, T}, -std::numeric_limits<float>::infinity(), q.options()).triu(1);
    }
    mask = m_mask.slice(0, 0, T).slice(1, 0, T);
  }
  auto att = torch::baddbmm(mask, q.reshape({BH, T, m_headDim}),
                            k.reshape({BH, T, m_headDim}).transpose(1, 2), /*beta=*/1.0,
                            /*alpha=*/scale);                                  // (BH, T, T)
  auto y = torch::bmm(torch::softmax(att, -1), v.reshape({BH, T, m_headDim}))  // (BH, T, D)
               .view({B, m_heads, T, m_headDim});
#endif
  return applyLinear(o_proj, y.transpose(1, 2).contiguous().view({B, T, m_heads * m_headDim}));
}

torch::Tensor AttentionImpl::probabilities(const torch::Tensor& q, const torch::Tensor& k) const {
  const int64_t T = q.size(2);
  const double scale = m_scale > 0 ? m_scale : 1.0 / std::sqrt(static_cast<double>(m_headDim));
  auto scores = torch::matmul(q, k.transpose(2, 3)) * scale;  // (B, H, T, T)
  if (m_softcap > 0) scores = torch::tanh(scores / m_softcap) * m_softcap;
  auto future = torch::ones({T, T}, q.options().dtype(torch::kBool)).triu(1);  // (T, T)
  scores = scores.masked_fill(future, -std::numeric_limits<float>::infinity());
  return torch::softmax(scores, -1);  // (B, H, T, T)
}

torch::Tensor AttentionImpl::cappedAttention(const torch::Tensor& q, const torch::Tensor& k,
                                             const torch::Tensor& v) const {
  return torch::matmul(probabilities(q, k), v);  // (B, H, T, D)
}

Activation activationFromString(const std::string& name) {
  if (name == "silu") return Activation::Silu;
  if (name == "gelu_tanh") return Activation::GeluTanh;
  if (name == "gelu") return Activation::Gelu;
  if (name == "relu") return Activation::Relu;
  throw std::invalid_argument("unknown MLP activation '" + name +
                              "' (silu, gelu_tanh, gelu, relu)");
}

SwiGluImpl::SwiGluImpl(const MlpShape& m)
    : m_activation(m.activation), m_plain(m.activation != Activation::Silu || !m.gated || m.bias) {
  auto lin = [&](const char* name, int64_t in, int64_t out) {
    return register_module(name, torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(m.bias)));
  };
  if (m.gated) gate_proj = lin("gate_proj", m.dModel, m.dFF);
  up_proj = lin("up_proj", m.dModel, m.dFF);
  down_proj = lin("down_proj", m.dFF, m.dModel);
}

torch::Tensor SwiGluImpl::activate(const torch::Tensor& x) const {
  switch (m_activation) {
    case Activation::Silu: return F::silu(x);
    case Activation::GeluTanh: return F::gelu(x, F::GELUFuncOptions().approximate("tanh"));
    case Activation::Gelu: return F::gelu(x);
    case Activation::Relu: return F::relu(x);
  }
  return x;
}

torch::Tensor SwiGluImpl::forward(const torch::Tensor& x) {
  if (m_plain) {  // imported architectures (Gemma's GeGLU, GPT-2, GPT-NeoX): no fused kernels
    auto u = applyLinear(up_proj, x);  // (B, T, F)
    auto h = gate_proj ? activate(applyLinear(gate_proj, x)) * u : activate(u);
    return applyLinear(down_proj, h);
  }
  if (fusedOpsApply(x)) {  // one GEMM for gate and up on the CPU (see Attention::forward)
    auto w =
        torch::cat({weightFor(gate_proj->weight, x), weightFor(up_proj->weight, x)});  // (2F, C)
    return applyLinear(down_proj, fusedSwiglu(torch::linear(x, w)));  // (B, T, 2F) -> (B, T, F)
  }
  auto g = applyLinear(gate_proj, x), u = applyLinear(up_proj, x);  // (B, T, F)
  if (cudaOpsApply(g) && g.scalar_type() == u.scalar_type()) return down_proj(cudaSwiglu(g, u));
  return applyLinear(down_proj, F::silu(g) * u);
}

}  // namespace depthlab::model

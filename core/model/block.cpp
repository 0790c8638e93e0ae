// The shared block; see block.h and the scheme table in block_plan.h.
#include "model/block.h"

namespace depthlab::model {

BlockImpl::BlockImpl(const BlockPlan& plan, const ModelConfig& model) : m_plan(plan) {
  const int64_t dModel = model.dModel;
  const double eps = model.normEps;
  const bool layerNorm = model.norm == "layernorm";
  self_attn = register_module(
      "self_attn", Attention(AttentionShape{
                       dModel, model.nHeads, model.kvHeads(), model.headDimension(), model.qkvBias,
                       model.outBias, model.qkNorm != QkNorm::None ? model.qkNorm : plan.qkNorm,
                       plan.vNorm, eps, model.attnScale, model.attnSoftcap}));
  mlp = register_module("mlp",
                        SwiGlu(MlpShape{dModel, model.dFF, activationFromString(model.activation),
                                        model.gatedMlp, model.mlpBias}));
  if (plan.normBeforeSublayer) {  // HybridNorm: no norm before attention
    if (!plan.hybrid) {
      input_layernorm = register_module(
          "input_layernorm", Norm(dModel, eps, layerNorm, plan.dyt ? plan.dytAlphaAttn : 0.0));
    }
    post_attention_layernorm =
        register_module("post_attention_layernorm",
                        Norm(dModel, eps, layerNorm, plan.dyt ? plan.dytAlphaOther : 0.0));
  }
  if (plan.sandwich) {
    attn_out_norm = register_module("attn_out_norm", Norm(dModel, eps, layerNorm));
    mlp_out_norm = register_module("mlp_out_norm", Norm(dModel, eps, layerNorm));
  }
  if (plan.skipInit) {
    skip_attn = register_parameter("skip_attn", torch::full({}, plan.skipInitValue));
    skip_mlp = register_parameter("skip_mlp", torch::full({}, plan.skipInitValue));
  }
  if (plan.layerScale) {
    layerscale_attn =
        register_parameter("layerscale_attn", torch::full({dModel}, plan.layerScaleValue));
    layerscale_mlp =
        register_parameter("layerscale_mlp", torch::full({dModel}, plan.layerScaleValue));
  }
  if (plan.learnableScale) {
    lns_scale = register_parameter("lns_scale", torch::full({dModel}, plan.depthScale));
    lns_gate = register_module("lns_gate",
                               torch::nn::Linear(torch::nn::LinearOptions(dModel, 1).bias(true)));
    torch::NoGradGuard ng;
    lns_gate->weight.zero_();
    lns_gate->bias.zero_();
  }
}

torch::Tensor BlockImpl::learnableScaleOut(const torch::Tensor& n) {
  // gate = 2*sigmoid(w . mean_{t'<=t} n_t' + b): causal pooled readout, 1 at init.
  const int64_t T = n.size(1);
  auto counts = torch::arange(1, T + 1, n.options()).view({1, T, 1});  // (1, T, 1)
  auto pooled = n.cumsum(1) / counts;                                  // (B, T, C)
  auto gate = 2.0 * torch::sigmoid(lns_gate(pooled));                  // (B, T, 1)
  return n * lns_scale * gate;
}

torch::Tensor BlockImpl::branchScale(torch::Tensor y, Branch which) const {
  if (m_plan.skipInit) y = y * (which == Branch::Attn ? skip_attn : skip_mlp);
  if (m_plan.layerScale) y = y * (which == Branch::Attn ? layerscale_attn : layerscale_mlp);
  return y;
}

void BlockImpl::recordBranch(BlockTrace* trace, Branch which, const torch::Tensor& delta,
                             const torch::Tensor& stream) {
  if (!trace || !trace->detailed) return;
  (which == Branch::Attn ? trace->attnDelta : trace->ffnDelta) = delta;
  (which == Branch::Attn ? trace->attnStream : trace->ffnStream) = stream;
}

torch::Tensor BlockImpl::attend(const torch::Tensor& x, const Rope& rope, BlockTrace* trace) {
  if (!trace || !trace->detailed) return self_attn(x, rope);
  AttentionProbe probe;
  auto y = self_attn->forward(x, rope, &probe);
  trace->attnEntropy = probe.entropy;
  trace->attnFirstKey = probe.firstKey;
  return y;
}

torch::Tensor BlockImpl::hybridSublayer(const torch::Tensor& x, Branch which, const Rope& rope,
                                        BlockTrace* trace) {
  if (which == Branch::Attn) {  // x + A(x), q, k, v normalised inside the attention
    if (trace) trace->attnNormOut = x;
    auto y = branchScale(attend(x, rope, trace), which);
    recordBranch(trace, which, y, x);
    return x + y;
  }
  auto g = post_attention_layernorm(x);  // (B, T, C): the stream itself is normalised
  if (trace) trace->ffnNormOut = g;
  auto y = branchScale(mlp(g), which);
  recordBranch(trace, which, y, g);
  return g + y;
}

torch::Tensor BlockImpl::sublayer(const torch::Tensor& x, Branch which, const Rope& rope, double s,
                                  BlockTrace* trace) {
  if (m_plan.hybrid) return hybridSublayer(x, which, rope, trace);
  if (m_plan.postLn) {  // N(alpha*x + F(x))
    Norm& norm = which == Branch::Attn ? input_layernorm : post_attention_layernorm;
    auto y = branchScale(which == Branch::Attn ? attend(x, rope, trace) : mlp(x), which);
    recordBranch(trace, which, y, x);
    return norm(m_plan.residualAlpha == 1.0 ? x + y : m_plan.residualAlpha * x + y);
  }
  auto y = branchOutput(x, which, rope, s, trace);
  recordBranch(trace, which, y, x);
  auto out = x + y;
  if (m_plan.placement == Placement::AfterResidual) out = out * s;
  return out;
}

torch::Tensor BlockImpl::branchOutput(const torch::Tensor& x, Branch which, const Rope& rope,
                                      double s, BlockTrace* trace) {
  Norm& norm = which == Branch::Attn ? input_layernorm : post_attention_layernorm;
  auto branch = [&](const torch::Tensor& in) {
    return which == Branch::Attn ? attend(in, rope, trace) : mlp(in);
  };
  const Placement p = m_plan.placement;
  auto in = p == Placement::BeforeNorm ? x * s : x;
  // The constant LNS factor after the norm is folded into the norm's own kernel;
  // lns_learnable's trainable scale (initialised to it) replaces it.
  const bool afterNorm = p == Placement::AfterNorm;
  const double normScale = afterNorm && !m_plan.learnableScale ? s : 1.0;
  // Straight into the branch's first matmuls unless the learnable scale or a probe reads it.
  const bool intoMatmul = !(afterNorm && m_plan.learnableScale) && !trace;
  torch::Tensor* traced = !trace                  ? nullptr
                          : which == Branch::Attn ? &trace->attnNormOut
                                                  : &trace->ffnNormOut;
  torch::Tensor n = in;  // (B, T, C)
  if (m_plan.normBeforeSublayer) {
    if (trace && norm->isTanh()) {  // DyT's input: the saturation probe reads it
      (which == Branch::Attn ? trace->attnNormIn : trace->ffnNormIn) = in;
    }
    n = intoMatmul ? norm->forwardIntoMatmul(in, normScale) : norm(in, normScale);
    if (afterNorm && m_plan.learnableScale) n = learnableScaleOut(n);
    if (traced) *traced = n;
  }
  auto y = branch(n);
  if (m_plan.sandwich) y = (which == Branch::Attn ? attn_out_norm : mlp_out_norm)(y);
  // Norms only after the sublayers (OLMo 2): that norm's output is the one the probes read.
  if (traced && !m_plan.normBeforeSublayer) *traced = y;
  if (p == Placement::AfterSublayer || (p == Placement::AfterAttnOnly && which == Branch::Attn) ||
      (p == Placement::AfterFfnOnly && which == Branch::Ffn)) {
    y = y * s;
  }
  return branchScale(y, which);
}

bool BlockImpl::defersResidual() const {
  const Placement p = m_plan.placement;
  return !m_plan.postLn && !m_plan.parallel && !m_plan.hybrid && m_plan.normBeforeSublayer &&
         m_plan.residualAlpha == 1.0 && p != Placement::BeforeNorm && p != Placement::AfterResidual;
}

std::pair<torch::Tensor, torch::Tensor> BlockImpl::deferredSublayer(const torch::Tensor& x,
                                                                    const torch::Tensor& pending,
                                                                    Branch which, const Rope& rope,
                                                                    double s) {
  Norm& norm = which == Branch::Attn ? input_layernorm : post_attention_layernorm;
  const Placement p = m_plan.placement;
  const bool afterNorm = p == Placement::AfterNorm;
  const double normScale = afterNorm && !m_plan.learnableScale ? s : 1.0;
  const bool intoMatmul = !(afterNorm && m_plan.learnableScale);
  auto [stream, n] = norm->addForward(x, pending, normScale, intoMatmul);  // (B, T, C) each
  if (afterNorm && m_plan.learnableScale) n = learnableScaleOut(n);
  auto y = which == Branch::Attn ? self_attn(n, rope) : mlp(n);
  if (m_plan.sandwich) y = (which == Branch::Attn ? attn_out_norm : mlp_out_norm)(y);
  if (p == Placement::AfterSublayer || (p == Placement::AfterAttnOnly && which == Branch::Attn) ||
      (p == Placement::AfterFfnOnly && which == Branch::Ffn)) {
    y = y * s;
  }
  if (m_plan.skipInit) y = y * (which == Branch::Attn ? skip_attn : skip_mlp);
  if (m_plan.layerScale) y = y * (which == Branch::Attn ? layerscale_attn : layerscale_mlp);
  return {stream, y};
}

std::pair<torch::Tensor, torch::Tensor> BlockImpl::forwardDeferred(
    const torch::Tensor& x, const torch::Tensor& pending, const Rope& rope,
    std::optional<double> scaleOverride) {
  const double s = scaleOverride.value_or(m_plan.depthScale);
  auto [h, attnOut] = deferredSublayer(x, pending, Branch::Attn, rope, s);  // h = x + pending
  return deferredSublayer(h, attnOut, Branch::Ffn, rope, s);                // {h + attnOut, mlp}
}

torch::Tensor BlockImpl::forward(const torch::Tensor& x, const Rope& rope,
                                 std::optional<double> scaleOverride, BlockTrace* trace) {
  const double s = scaleOverride.value_or(m_plan.depthScale);
  if (m_plan.parallel) {  // GPT-NeoX: both branches read x; summed as transformers sums them
    auto a = branchOutput(x, Branch::Attn, rope, s, trace);  // (B, T, C)
    auto f = branchOutput(x, Branch::Ffn, rope, s, trace);
    recordBranch(trace, Branch::Attn, a, x);
    recordBranch(trace, Branch::Ffn, f, x);
    return f + a + x;
  }
  auto h = sublayer(x, Branch::Attn, rope, s, trace);  // (B, T, C)
  return sublayer(h, Branch::Ffn, rope, s, trace);     // (B, T, C)
}

}  // namespace depthlab::model

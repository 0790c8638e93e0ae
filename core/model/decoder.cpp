// Decoder forward pass and weight initialisation; see decoder.h.
#include "model/decoder.h"

#include <tuple>

#include <cmath>

#include "model/cuda_ops.h"

namespace depthlab::model {

namespace {

void adopt(torch::nn::Module& module, const std::string& prefix, const ParameterSource& source) {
  torch::NoGradGuard ng;
  for (auto& p : module.named_parameters()) {
    auto t = source(prefix + p.key(), p.value());
    p.value().set_data(t);
    p.value().requires_grad_(false);
  }
}

}  // namespace

DecoderImpl::DecoderImpl(const ModelConfig& model, const SchemeOptions& options,
                         const std::string& scheme, const ParameterSource& source)
    : m_config(model),
      m_options(options),
      m_scheme(scheme),
      m_plans(planBlocks(model, options, scheme)),
      m_rope(model.headDimension(), model.seqLen, model.ropeBase, model.ropeScaling,
             model.rotaryDims()) {
  const auto& m = m_config;
  const bool layerNorm = m.norm == "layernorm";
  if (m.localRopeBase > 0) {
    m_localRope.emplace(m.headDimension(), m.seqLen, m.localRopeBase, RopeScaling{},
                        m.rotaryDims());
  }
  embed_tokens = register_module("embed_tokens", torch::nn::Embedding(m.vocabSize, m.dModel));
  if (source) adopt(*embed_tokens, "embed_tokens.", source);
  if (m.learnedPositions > 0) {  // GPT-2's wpe: (positions, C)
    embed_positions =
        register_module("embed_positions", torch::nn::Embedding(m.learnedPositions, m.dModel));
    if (source) adopt(*embed_positions, "embed_positions.", source);
  }
  layers = register_module("layers", torch::nn::ModuleList());
  for (size_t i = 0; i < m_plans.size(); ++i) {
    Block b(m_plans[i], m);
    if (source) adopt(*b, "layers." + std::to_string(i) + ".", source);
    layers->push_back(b);
    m_blocks.push_back(b);
  }
  // DyT schemes: the final norm is DyT too, and the embeddings get DyT's learnable scalar.
  const bool dyt = !m_plans.empty() && m_plans.front().dyt;
  norm = register_module(
      "norm", Norm(m.dModel, m.normEps, layerNorm, dyt ? m_plans.front().dytAlphaOther : 0.0));
  if (source) adopt(*norm, "norm.", source);
  if (dyt) {
    embed_scale = register_parameter("embed_scale",
                                     torch::full({}, std::sqrt(static_cast<double>(m.dModel))));
  }
  if (!m.tieEmbeddings) {
    lm_head = register_module(
        "lm_head", torch::nn::Linear(torch::nn::LinearOptions(m.dModel, m.vocabSize).bias(false)));
    if (source) adopt(*lm_head, "lm_head.", source);
  }
  if (!source) initWeights();
}

torch::Tensor DecoderImpl::head(const torch::Tensor& h) {
  auto logits = lm_head ? applyLinear(lm_head, h)
                        : torch::linear(h, weightFor(embed_tokens->weight, h));  // tied: (V, C)
  if (m_config.finalSoftcap > 0) {  // imported Gemma 2: cap * tanh(logits / cap)
    logits = torch::tanh(logits / m_config.finalSoftcap) * m_config.finalSoftcap;
  }
  return logits;
}

void DecoderImpl::initWeights() {
  torch::NoGradGuard ng;
  const double std = m_config.initStd;
  embed_tokens->weight.normal_(0.0, m_config.embedStd);
  if (embed_positions) embed_positions->weight.normal_(0.0, m_config.embedStd);
  if (lm_head) lm_head->weight.normal_(0.0, std);
  // A missing module (an ungated MLP's gate) is left out; biases keep LibTorch's own init.
  auto normalInit = [](torch::nn::Linear& l, double s) {
    if (l) l->weight.normal_(0.0, s);
  };
  auto xavier = [](torch::nn::Linear& l, double gain) {
    if (l) torch::nn::init::xavier_normal_(l->weight, gain);
  };
  for (auto& b : m_blocks) {
    const BlockPlan& p = b->plan();
    auto& a = b->self_attn;
    auto& f = b->mlp;
    if (p.xavierGainVOF > 0) {  // deepnorm
      xavier(a->q_proj, p.xavierGainQK);
      xavier(a->k_proj, p.xavierGainQK);
      for (auto* l : {&a->v_proj, &a->o_proj, &f->gate_proj, &f->up_proj, &f->down_proj}) {
        xavier(*l, p.xavierGainVOF);
      }
    } else {
      for (auto* l : {&a->q_proj, &a->k_proj, &a->v_proj, &f->gate_proj, &f->up_proj}) {
        normalInit(*l, p.stdIn);
      }
      normalInit(a->o_proj, p.stdOut);
      normalInit(f->down_proj, p.stdOut);
    }
  }
}

void DecoderImpl::to(torch::Device device) {
  torch::nn::Module::to(device);
  m_rope.to(device);
  if (m_localRope) m_localRope->to(device);
}

const Rope& DecoderImpl::rope(int i) const {
  const bool local = m_localRope && m_plans[static_cast<size_t>(i)].localRope;
  return local ? *m_localRope : m_rope;
}

torch::Tensor DecoderImpl::forward(const torch::Tensor& idx) {
  return forward(idx, ForwardOptions{}, nullptr);
}

torch::Tensor DecoderImpl::embed(const torch::Tensor& idx) {
  auto x = embed_tokens(idx);  // (B, T, C)
  if (x.scalar_type() == torch::kBFloat16 || x.scalar_type() == torch::kFloat16) {
    x = x.to(torch::kFloat32);  // weights stored narrow; activations are float32
  }
  if (m_config.embedScale != 1.0) x = x * m_config.embedScale;  // imported Gemma: sqrt(C)
  if (embed_scale.defined()) x = x * embed_scale;  // DyT: a learnable scalar, init sqrt(C)
  if (embed_positions) {                           // GPT-2: + wpe[0..T)
    const int64_t T = idx.size(1), P = embed_positions->weight.size(0);
    TORCH_CHECK(T <= P, "a sequence of ", T, " tokens is longer than the model's ", P,
                " learned positions");
    x = x + weightFor(embed_positions->weight.slice(0, 0, T), x);  // (T, C) over (B, T, C)
  }
  return x;
}

torch::Tensor DecoderImpl::forward(const torch::Tensor& idx, const ForwardOptions& opts,
                                   ForwardTrace* trace) {
  return forwardFrom(embed(idx), 0, opts, trace);  // (B, T, C) -> (B, T, V)
}

torch::Tensor DecoderImpl::forwardFrom(const torch::Tensor& input, int startBlock,
                                       const ForwardOptions& opts, ForwardTrace* trace) {
  auto x = input;  // (B, T, C)
  if (trace) {
    trace->blockInputs.clear();
    BlockTrace empty;
    empty.detailed = trace->detailed;
    trace->blocks.assign(m_blocks.size(), empty);
  }
  // Without a trace, Pre-LN-family blocks defer each residual add into the norm after it
  // (x + pending is the stream); see Block::forwardDeferred. The same numbers either way.
  torch::Tensor pending;
  for (size_t i = static_cast<size_t>(startBlock); i < m_blocks.size(); ++i) {
    if (trace) trace->blockInputs.push_back(x);
    if (!opts.skip.empty() && opts.skip[i]) continue;  // pruned: identity
    std::optional<double> s;
    if (!opts.scaleOverride.empty()) s = opts.scaleOverride[i];
    if (!trace && m_blocks[i]->defersResidual()) {
      std::tie(x, pending) = m_blocks[i]->forwardDeferred(x, pending, rope(static_cast<int>(i)), s);
      continue;
    }
    if (pending.defined()) x = x + pending;
    pending = torch::Tensor();
    x = m_blocks[i]->forward(x, rope(static_cast<int>(i)), s,
                             trace ? &trace->blocks[i] : nullptr);  // (B, T, C)
  }
  if (trace) trace->blockInputs.push_back(x);
  return head(norm->addForward(x, pending, 1.0, /*intoMatmul=*/true).second);  // (B, T, V)
}

torch::Tensor DecoderImpl::loss(const torch::Tensor& idx, const torch::Tensor& targets,
                                const ForwardOptions* opts) {
  auto logits = opts ? forward(idx, *opts) : forward(idx);  // (B, T, V)
  if (cudaOpsApply(logits)) {  // straight from bf16 logits, no float32 copy of them
    return cudaCrossEntropy(logits.reshape({-1, logits.size(-1)}), targets.reshape({-1}));
  }
  return torch::nn::functional::cross_entropy(
      logits.reshape({-1, logits.size(-1)}).to(torch::kFloat32), targets.reshape({-1}));
}

std::vector<torch::Tensor> DecoderImpl::lnsScaleParameters() {
  std::vector<torch::Tensor> out;
  for (auto& b : m_blocks) {
    if (b->lns_scale.defined()) out.push_back(b->lns_scale);
  }
  return out;
}

std::vector<torch::Tensor> DecoderImpl::otherParameters() {
  std::vector<torch::Tensor> out;
  auto special = lnsScaleParameters();
  for (auto& p : parameters()) {
    bool isSpecial = false;
    for (auto& s : special) isSpecial = isSpecial || s.is_same(p);
    if (!isSpecial) out.push_back(p);
  }
  return out;
}

}  // namespace depthlab::model

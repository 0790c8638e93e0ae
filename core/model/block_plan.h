// BlockPlan: what a normalization scheme means for one block, as data. planBlocks() turns a
// scheme (its entry in scheme_catalogue.h) and the model config (its SchemeOptions) into one
// plan per block; the single Block implementation reads it. Schemes are data, not subclasses.
// No torch here.
//
// Notation (l = 1-based block index, L blocks, N = norm, A = attention, F = SwiGLU MLP):
//   pre_ln      h = x + A(N1(x));              out = h + F(N2(h))
//   lns         h = x + A(N1(x)/sqrt(l));      out = h + F(N2(h)/sqrt(l))    (after_norm)
//   post_ln     h = N1(x + A(x));              out = N2(h + F(h))
//   mix_ln      post_ln for the first round(alpha*L) blocks, pre_ln after
//   deepnorm    h = N1(a*x + A(x));            out = N2(a*h + F(h)), a=(2L)^(1/4),
//               Xavier-normal init gain b=(8L)^(-1/4) on v/o/gate/up/down, 1 on q/k
//   deepnorm_official  same with the official code's a = sqrt(8), gain (8L)^(+1/4)
//   sandwich    h = x + N1b(A(N1(x)));         out = h + N2b(F(N2(h)))      (Peri-LN)
//   (OLMo 2)    h = x + N1b(A(x));             out = h + N2b(F(h))          not a scheme: an
//               imported architecture (ModelConfig normBeforeSublayer false, normAfterSublayer)
//   (GPT-NeoX)  out = x + A(N1(x)) + F(N2(x))  parallel: both sublayers read the block's input
//               (ModelConfig parallelResidual; Pre-LN schemes only)
//   lns_learnable  lns with a learnable per-channel scale (init 1/sqrt(l)) times a gate
//               2*sigmoid(w . causal_mean(N(x)) + b) (w=0, b=0: starts equal to lns)
//   dyt         pre_ln with every norm (and the final one) DyT(x) = w * tanh(alpha x) (+ b),
//               alpha a learnable scalar; the embeddings times a learnable scalar init sqrt(C)
//   dyt_lns     dyt with block l's DyT outputs times 1/sqrt(l)
//   hybridnorm  h = x + A_qkv(x) (q, k, v RMSNorm'd per head); g = N2(h); out = g + F(g)
//   hybridnorm_star  block 1: h = x + A_qkv(N1(x)); out = h + F(N2(h)); then hybridnorm
//   olmo2       h = x + N1b(A(x)); out = h + N2b(F(h)), q/k RMSNorm over the projection
//   (option qkNorm) any scheme: q and k RMSNorm'd per head before RoPE
// docs/schemes.md has every formula with its paper and the choices DepthLab made.
#pragma once

#include <string>
#include <vector>

#include "model/model_config.h"
#include "util/config_error.h"

namespace depthlab::model {

enum class Placement {   // where the LNS factor multiplies (paper Table 8)
  None,                  // no depth scaling
  AfterNorm,             // LNS: norm output * s (both sublayers)
  BeforeNorm,            // norm input * s
  AfterSublayer,         // branch output * s, before the residual add
  AfterResidual,         // (x + branch) * s
  AfterAttnOnly,         // branch output * s, attention only
  AfterFfnOnly,          // branch output * s, FFN only
};

struct BlockPlan {
  int index = 1;                // l, 1-based original position (kept when pruning)
  bool postLn = false;          // norm after the residual add (post_ln, mix_ln head, deepnorm)
  bool sandwich = false;        // extra norm on each sublayer's output
  bool normBeforeSublayer = true;  // false: the sublayer reads x itself (imported OLMo 2)
  bool localRope = false;       // rotated with the model's localRopeBase (Gemma 3's sliding layers)
  bool parallel = false;        // out = x + A(N1(x)) + F(N2(x)) (imported GPT-NeoX)
  double residualAlpha = 1.0;   // deepnorm: multiplies the skip path
  Placement placement = Placement::None;
  double depthScale = 1.0;      // the constant s = 1/sqrt(l); never trainable state
  bool learnableScale = false;  // lns_learnable
  bool skipInit = false;        // learnable scalar per branch
  double skipInitValue = 1.0;   // 1/sqrt(L)
  bool layerScale = false;      // learnable per-channel branch scale
  double layerScaleValue = 1e-4;
  bool dyt = false;             // every norm DyT (dyt, dyt_lns)
  double dytAlphaAttn = 0.0;    // DyT's initial alpha before attention (set by planBlocks)
  double dytAlphaOther = 0.0;   // before the MLP, and the final norm's
  QkNorm qkNorm = QkNorm::None; // q/k RMSNorm (option qkNorm: per head; olmo2: whole)
  bool vNorm = false;           // v RMSNorm per head too (HybridNorm's QKV-norm)
  bool hybrid = false;          // HybridNorm: no norm before attention; out = N2(h) + F(N2(h))
  // Init: std of N(0, std) for q/k/v/o and gate/up/down; xavier gains replace it when > 0.
  double stdIn = 0.02;          // q, k, v, gate, up
  double stdOut = 0.02;         // o, down
  double xavierGainQK = 0.0;    // deepnorm: Xavier-normal gains instead of N(0, std)
  double xavierGainVOF = 0.0;
};

/// One plan per block for `scheme` (its scheme_catalogue entry's plan, then the options every
/// scheme shares and the imported architecture's norms); throws ConfigError on unknown names.
std::vector<BlockPlan> planBlocks(const ModelConfig& model, const SchemeOptions& options,
                                  const std::string& scheme);
/// round(alpha * L) leading Post-LN blocks of mix_ln.
int mixLnPostBlocks(int nLayers, double alpha);
double deepnormAlpha(int nLayers, bool official);
double deepnormGain(int nLayers, bool official);
Placement placementFromString(const std::string& s);
/// DyT's initial alpha by width, from the paper's LLaMA settings (attention / other norms):
/// C <= 4096: 0.8 / 0.2; C <= 5120: 0.6 / 0.15; wider: 0.2 / 0.05.
double dytAlphaByWidth(int width, bool attention);

}  // namespace depthlab::model

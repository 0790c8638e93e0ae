// The model's own config: the decoder's shape (ModelConfig) and the options that change its
// blocks beyond the scheme's name (SchemeOptions). Owned by model/; experiment/ composes it
// into ExperimentConfig and serialises it. Plain data, no torch.
#pragma once

#include <string>
#include <vector>

#include "model/rope_scaling.h"

namespace depthlab::model {

/// RMSNorm of the queries and keys before RoPE (imported architectures).
enum class QkNorm {
  None,
  PerHead,  // over each head's D values, weights (D): Qwen3
  Whole,    // over the whole projection, weights (H*D) for q, (K*D) for k: OLMo 2
};

struct ModelConfig {
  int vocabSize = 257;        // set from the tokenizer at run time (bytes + end-of-document)
  int dModel = 64;            // C, residual width
  int nLayers = 4;            // L, blocks
  int nHeads = 4;             // H; head dim = dModel / nHeads
  int dFF = 172;              // SwiGLU hidden width
  int seqLen = 64;            // T, training context
  std::string norm = "rmsnorm";   // rmsnorm | layernorm
  double normEps = 1e-6;
  double initStd = 0.02;      // N(0, initStd) for every Linear
  double embedStd = 0.02;     // 0.02 (paper), sqrt(2/5) ~ 0.632 (older official code)
  double ropeBase = 10000.0;
  // What Hugging Face Llama / Mistral / Qwen2 checkpoints need (the defaults are DepthLab's own
  // decoder: plain multi-head attention, no biases, untied head).
  int nKvHeads = 0;           // key/value heads (grouped-query attention); 0 = nHeads
  int headDim = 0;            // D; 0 = dModel / nHeads
  bool qkvBias = false;       // biases on q_proj, k_proj, v_proj (Qwen2)
  bool tieEmbeddings = false; // the LM head reuses embed_tokens' weight
  // Architectures of imported Hugging Face models beyond Llama. DepthLab's own runs keep these
  // defaults; they are not part of a run's config JSON (an imported run reads them again from
  // its config.json, see hf/hf_import.h).
  RopeScaling ropeScaling;        // how the rotary frequencies are scaled (rope_scaling.h)
  QkNorm qkNorm = QkNorm::None;   // q/k RMSNorm before RoPE (Qwen3, OLMo 2)
  bool normBeforeSublayer = true; // false: no norm before attention / MLP (OLMo 2)
  bool normAfterSublayer = false; // a norm on each sublayer's output before the residual add
  std::string activation = "silu";  // the MLP's: silu (SwiGLU) | gelu_tanh (GeGLU, Gemma; GPT-2's
                                    // gelu_new) | gelu (exact, GPT-NeoX) | relu
  double embedScale = 1.0;        // the embeddings times this (Gemma: sqrt(C))
  double attnScale = 0.0;         // q.k scale; 0: 1/sqrt(D) (Gemma: query_pre_attn_scalar^-1/2)
  double attnSoftcap = 0.0;       // > 0: scores -> cap * tanh(scores / cap) (Gemma 2)
  double finalSoftcap = 0.0;      // > 0: the same on the logits (Gemma 2)
  double localRopeBase = 0.0;     // > 0: the base of the blocks in localRopeLayers (Gemma 3)
  std::vector<bool> localRopeLayers;  // per block: true = rotated with localRopeBase, unscaled
  // GPT-2 and GPT-NeoX (Pythia); each off by default, where it costs nothing.
  bool outBias = false;           // a bias on o_proj
  bool mlpBias = false;           // biases on the MLP's projections
  bool gatedMlp = true;           // false: down(act(up(x))), no gate_proj
  double rotaryFraction = 1.0;    // share of each head RoPE rotates, its first dims (GPT-NeoX's
                                  // rotary_pct); 0: no RoPE (GPT-2)
  int learnedPositions = 0;       // > 0: a table of this many absolute positions added to the
                                  // embeddings (GPT-2's wpe, n_positions rows)
  bool parallelResidual = false;  // x + A(N1(x)) + F(N2(x)) (GPT-NeoX's use_parallel_residual)

  int kvHeads() const { return nKvHeads > 0 ? nKvHeads : nHeads; }
  int headDimension() const { return headDim > 0 ? headDim : dModel / nHeads; }
  /// The dims of each head RoPE rotates, as transformers counts them: int(D * fraction).
  int rotaryDims() const { return static_cast<int>(headDimension() * rotaryFraction); }
};

struct SchemeOptions {
  double mixLnAlpha = 0.25;       // mix_ln: first round(alpha*L) blocks are Post-LN
  bool scaledInit = false;        // o_proj/down_proj std initStd/sqrt(2L)
  bool depthScaledInit = false;   // block l's matrices std initStd/sqrt(2l)
  bool skipInit = false;          // learnable scalar per branch, init 1/sqrt(L)
  bool layerScale = false;        // per-channel branch scale, init layerScaleInit
  double layerScaleInit = 1e-4;
  std::string lnsPlacement = "after_norm";  // lns only: see kLnsPlacements
  double lnsLearnableLr = 1e-3;   // lns_learnable: lr of the per-channel scales
  bool qkNorm = false;            // any scheme: per-head RMSNorm of q and k before RoPE
  // DyT schemes (dyt, dyt_lns): tanh(alpha x)'s initial alpha; 0 = DyT's table by width
  // (model::dytAlphaInit): attention norms 0.8, the others (MLP, final) 0.2 up to width 4096.
  double dytAlphaAttn = 0.0;
  double dytAlphaOther = 0.0;
};

}  // namespace depthlab::model

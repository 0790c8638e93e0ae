// The model's own config: the decoder's shape (ModelConfig) and the options that change its
// blocks beyond the scheme's name (SchemeOptions). Owned by model/; experiment/ composes it
// into ExperimentConfig and serialises it. Plain data, no torch.
#pragma once

#include <string>

namespace depthlab::model {

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

  int kvHeads() const { return nKvHeads > 0 ? nKvHeads : nHeads; }
  int headDimension() const { return headDim > 0 ? headDim : dModel / nHeads; }
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
};

}  // namespace depthlab::model

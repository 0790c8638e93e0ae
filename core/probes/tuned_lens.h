// The tuned lens (Belrose et al., arXiv 2303.08112): per block an affine translator
// h -> h + A_l h + b_l, identity at the start (A, b zero), trained so that the model's own final
// norm and head read the translated stream as the model's output distribution: the loss is
// KL(p || q_l) of every translator, summed, mean over tokens, as the `tuned-lens` package trains
// it (SGD with Nesterov momentum 0.9, lr 1.0 x (1 - 0.9), weight decay 1e-3, the gradient's norm
// clipped to 1 over every translator, the learning rate falling linearly to 0 over the steps,
// no warm-up). Translator l reads the stream entering block l (l = 0: the embeddings), as the
// package's does hidden_states[l]; the stream after the last block is the model's output and
// needs none. In float32 (the package trains under bf16 autocast; docs/probes.md).
// The lens's statistics are the logit lens's (logit_lens.h) through the translators, so a lens
// at its start equals the logit lens. Saved as a torch archive with its FNV-1a hash beside it.
// Does not: choose the text, a cadence or a folder, or store rows (experiment/ does).
// Legend: L blocks, B rows, T sequence length, C width, V vocabulary, N tokens.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

#include "model/decoder.h"
#include "probes/logit_lens.h"

namespace depthlab::probes {

struct TunedLens {
  std::vector<torch::Tensor> weight;  // L of (C, C) float32: A_l
  std::vector<torch::Tensor> bias;    // L of (C) float32: b_l
};

struct TunedLensTraining {
  int steps = 250;       // the package's default
  int rowsPerStep = 8;   // sequences of `text` per step, taken in turn
  double lrScale = 1.0;  // lr = lrScale x (1 - momentum), as the package's SGD
  double momentum = 0.9;
  double weightDecay = 1e-3;
  double clipNorm = 1.0;
  int64_t chunkTokens = 0;  // tokens per head evaluation; 0: ~16M logits a chunk
};

/// The identity lens of `model` (every A and b zero), on its device.
TunedLens identityLens(model::Decoder& model);

/// Trains a lens from the identity on `text` (R, T) int64 token rows (every position counts),
/// `o.rowsPerStep` rows a step in turn. `progress(step, steps, meanKl)` after each step, the
/// KL summed over translators of that step's batch. The model's weights get no gradient.
TunedLens trainTunedLens(model::Decoder& model, const torch::Tensor& text,
                         const TunedLensTraining& o,
                         const std::function<void(int, int, double)>& progress = {});

/// The lens statistics through `lens` on a traced pass (trace.blockInputs, L+1 streams): as
/// logitLensOfTrace, the translated stream after blocks 1..L-1 and the output after block L.
LogitLens tunedLensOfTrace(model::Decoder& model, const TunedLens& lens,
                           const model::ForwardTrace& trace, const torch::Tensor& targets);

/// Writes `lens` to `path` (a torch archive) and its hash to `path`.fnv1a; returns the hash.
std::string saveTunedLens(const TunedLens& lens, const std::string& path);
/// The lens at `path` when its hash file matches its bytes and its shape fits `model`;
/// std::runtime_error naming what does not.
TunedLens loadTunedLens(const std::string& path, model::Decoder& model);

}  // namespace depthlab::probes

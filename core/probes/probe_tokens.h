// Which positions of a probe batch count, and the losses over them. Document packing pads a
// row after its document (data::TokenDataset): the pad targets are data::kIgnoreTarget (-100)
// and the pad inputs are no tokens of the text. A position's hidden states count when its
// input is a real token (every position before the first pad; the document's last token
// counts though its target is a pad); a loss counts the targets that are not pads. Batches
// without pads (packed windows) take the probes' unmasked paths, unchanged.
// Does not: compute the depth statistics (depth_probes.cpp) or read the model.
// Legend: B rows, T sequence length, C width, V vocabulary, N real tokens.
#pragma once

#include <torch/torch.h>

namespace depthlab::probes {

/// (B, T) bool on the targets' device: true where the input is a real token. Undefined when
/// no target is a pad (reads the host once).
torch::Tensor realTokens(const torch::Tensor& targets);
/// (B) float32: each row's targets that count. Undefined when none is a pad (reads the host
/// once).
torch::Tensor countedTargets(const torch::Tensor& targets);
/// (B) the mean cross-entropy of each sequence in float32 over its counted targets
/// (`counted` from countedTargets; undefined: every target counts), on the logits' device.
torch::Tensor sequenceLosses(const torch::Tensor& logits, const torch::Tensor& targets,
                             const torch::Tensor& counted);
/// The mean cross-entropy over every counted target in float32, read on the host.
double lossOf(const torch::Tensor& logits, const torch::Tensor& targets);

/// The real tokens of x (..., B, T, C) (`real` from realTokens): (..., N, C).
torch::Tensor realRows(const torch::Tensor& x, const torch::Tensor& real);
/// The last real token of each row of x (..., B, T, C): (..., B, C).
torch::Tensor lastRealRows(const torch::Tensor& x, const torch::Tensor& real);

}  // namespace depthlab::probes

// The saturation probe of tanh-bounded schemes (DyT, DyT + LNS): per block, the share of the
// elements its DyT norms read with |alpha x| above a threshold, where tanh is flat and the
// gradient through it vanishes (tanh(2) = 0.964). Recent work ties DyT's gains and losses to
// this share (docs/schemes.md). Reads a traced forward pass (model/block.h's attnNormIn,
// ffnNormIn); runs nothing itself and writes nowhere. Models without DyT give an empty result.
// Legend: L blocks, B rows, T time, C width.
#pragma once

#include <torch/torch.h>

#include <optional>
#include <vector>

#include "model/decoder.h"

namespace depthlab::probes {

/// |alpha x| above this counts as saturated.
inline constexpr double kDytSaturationThreshold = 2.0;

/// (L): for block l, the share of the elements of both its DyT inputs (before attention and
/// before the MLP, (B, T, C) each, at real tokens when `real` is defined) with
/// |alpha x| > threshold, alpha each norm's own; NaN for a block without DyT norms. Empty when
/// no block has one.
std::vector<float> dytSaturation(model::Decoder& model, const model::ForwardTrace& trace,
                                 const torch::Tensor& real,
                                 double threshold = kDytSaturationThreshold);

/// The same share for the final norm when it is DyT: of its input, the residual stream after
/// the last block (trace.blockInputs.back(), at real tokens); nullopt without DyT. A final DyT
/// saturated throughout gives the same logits whatever the blocks do.
std::optional<double> dytFinalSaturation(model::Decoder& model, const model::ForwardTrace& trace,
                                         const torch::Tensor& real,
                                         double threshold = kDytSaturationThreshold);

}  // namespace depthlab::probes

// What a checkpoint holds, as named tensors: the model's parameters and buffers, and Adam's or
// AdamW's per-parameter state (moments; step counters and options go beside them as JSON).
// The one enumeration that saving, loading and the data-parallel resume's broadcast share, so
// every rank and every file lists the same tensors in the same order. Does no I/O.
#pragma once

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "model/decoder.h"

namespace depthlab::train {

struct NamedTensor {
  std::string name;  // "model/<parameter or buffer>", "optim/<group>/<param>/<field>"
  torch::Tensor tensor;
};

/// Parameters, then buffers, in registration order, each named "model/<its name>".
std::vector<NamedTensor> modelTensors(model::Decoder& model);

/// The optimizer's state as tensors (exp_avg, exp_avg_sq, and max_exp_avg_sq with amsgrad) of
/// every parameter that has state, plus `json`: kind, each group's options and every state's
/// step counter. Throws CheckpointError for an optimizer other than Adam or AdamW.
struct OptimizerSnapshot {
  std::vector<NamedTensor> tensors;
  nlohmann::json json;
};
OptimizerSnapshot optimizerSnapshot(torch::optim::Optimizer& optimizer);

/// Makes `optimizer` ready to receive the state `json` (an OptimizerSnapshot's) describes: group
/// options and step counters set, state objects created (zero moments) where missing, states of
/// parameters `json` does not list dropped. Returns the tensors to fill, by the snapshot's names.
/// Throws CheckpointError when the groups or kinds do not match.
std::vector<NamedTensor> prepareOptimizerState(torch::optim::Optimizer& optimizer,
                                               const nlohmann::json& json);

/// Gives every parameter a state (zero moments, step 0) where it has none: what its first step
/// would create. The data-parallel resume's followers and `bench checkpoint` use it.
void createMissingOptimizerState(torch::optim::Optimizer& optimizer);

}  // namespace depthlab::train

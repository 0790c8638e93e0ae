// One micro-batch's forward (bf16 autocast when asked) and backward with its loss divided by
// the update's micro-batch count, as every single-thread training path runs it: the eager step
// and the CUDA graphs' captures (train/cuda_graph_step). Not the CPU row split, which runs its
// shares on worker threads. Also a token batch seen as tensors, for every path that copies one
// to its device. Header-only; torch-using core sources only.
// Legend: B micro-batch, T sequence length.
#pragma once

#include <torch/torch.h>

#include <utility>

#include "data/token_dataset.h"
#include "model/decoder.h"
#include "train/autocast_scope.h"

namespace depthlab::train {

/// The batch's inputs and targets as (B, T) int64 tensors over its own host memory: no copy,
/// valid while `b` lives (copy them to the device that needs them).
inline std::pair<torch::Tensor, torch::Tensor> batchViews(const data::TokenBatch& b) {
  const auto opts = torch::TensorOptions().dtype(torch::kInt64);
  return {torch::from_blob(const_cast<int64_t*>(b.inputs.data()), {b.batch, b.seqLen}, opts),
          torch::from_blob(const_cast<int64_t*>(b.targets.data()), {b.batch, b.seqLen}, opts)};
}

/// Forward on x, y (B, T), then backward of loss / count (gradients added into .grad as usual).
/// Returns the micro-batch's loss, () float32 on the device, detached; nothing is read here.
inline torch::Tensor forwardBackward(model::Decoder& model, const torch::Tensor& x,
                                     const torch::Tensor& y, bool autocast, double count) {
  torch::Tensor loss;
  {
    AutocastScope scope(autocast);
    loss = model->loss(x, y);
  }
  (loss / count).backward();
  return loss.detach().to(torch::kFloat32);
}

}  // namespace depthlab::train

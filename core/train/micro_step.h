// One micro-batch's forward (bf16 autocast when asked) and backward with its loss divided by
// the update's micro-batch count, as every single-thread training path runs it: the eager step
// and the CUDA graphs' captures (train/cuda_graph_step). Not the CPU row split, which runs its
// shares on worker threads. Header-only; torch-using core sources only.
// Legend: B micro-batch, T sequence length.
#pragma once

#include <torch/torch.h>

#include "model/decoder.h"
#include "train/autocast_scope.h"

namespace depthlab::train {

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

// CudaGraphStep: one micro-batch's forward and backward on a CUDA GPU, captured once as CUDA
// graphs and replayed at every later update of the same shape. A small model on a fast GPU
// spends its step launching kernels and running the autograd engine on the host; a replay is
// one launch for the whole micro-step.
//
// Two graphs share one memory pool: the update's first micro-batch, whose backward creates the
// gradients (in the pool, where they stay: every replay writes them afresh), and a later one,
// whose backward adds into them. Each replays with the batch copied into static input tensors
// and leaves its loss (divided by nothing: the caller's mean) in a static output. The capture
// is redone when the key changes: the micro-batch shape (B, T), the number of micro-batches,
// autocast, DepthLab's CUDA kernel switches, or any parameter's storage (a checkpoint loaded
// into new tensors, a dtype change).
//
// Does not: run the optimizer step, the gradient norms or clipping (the learning rate and the
// clip coefficient change every update; they stay eager after the replays), data-parallel
// gradient sync, the CPU row split, or probes (their own forwards, eager). Not thread-safe.
// Without DEPTHLAB_WITH_CUDA (Debian's CPU LibTorch) built() is false and run() throws.
// Legend: B micro-batch, T sequence length.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "data/token_dataset.h"
#include "model/decoder.h"

namespace depthlab::train {

class CudaGraphStep {
 public:
  /// `params`: every parameter whose gradient the trainer reads (their order is kept).
  CudaGraphStep(model::Decoder model, std::vector<torch::Tensor> params, torch::Device device);
  ~CudaGraphStep();
  CudaGraphStep(const CudaGraphStep&) = delete;
  CudaGraphStep& operator=(const CudaGraphStep&) = delete;

  /// True when this LibTorch has CUDA and DepthLab was built with it.
  static bool built();
  /// The trainer's default (read once): on, DEPTHLAB_CUDA_GRAPHS=0 in the environment turns
  /// them off (checked on an H200: every GPU test with them on, +3% tokens/s at LLaMA-130M,
  /// 5x on a 24 x 64 model).
  static bool enabledByEnvironment();

  /// Forward and backward of micro-batch `index` (0-based) of `count` on `batch`, the loss
  /// divided by `count` before backward, as the eager step does; the gradients end up in the
  /// parameters' .grad (index 0 sets them, later ones add). Captures first when the key
  /// changed at index 0 (after one eager warm-up pass on the capture stream, its gradients
  /// dropped). Returns the micro-batch's loss, () float32 on the device, a tensor of its own.
  /// Throws (c10::Error / std::runtime_error) when capture fails: the caller goes eager, and
  /// the gradients are then undefined.
  torch::Tensor run(const data::TokenBatch& batch, int index, int count, bool autocast);

  int64_t captures() const;  // graphs captured so far (1 or 2 per key)
  int64_t replays() const;   // micro-batches run by replay

 private:
  struct Impl;
  std::unique_ptr<Impl> m;
};

}  // namespace depthlab::train

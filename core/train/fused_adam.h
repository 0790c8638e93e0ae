// Adam and AdamW whose step makes one fused pass instead of torch::optim's eight tensor passes
// per parameter: on the CPU our own kernel (kernels::adamUpdate) per parameter; on CUDA (and
// any device, LibTorch >= 2.4) ATen's multi-tensor kernel (_fused_adam_ / _fused_adamw_, the
// one behind PyTorch's `fused=True`), a few launches for the whole model. They are
// torch::optim::Adam / AdamW: same options, same per-parameter state objects (checkpoints save
// and load exactly as before), same arithmetic. A step with the fused kernels switched off, with
// amsgrad on, a sparse gradient, or parameters no fused path takes (CPU non-float32 or
// non-contiguous; older LibTorch off the CPU), runs torch::optim's own implementation instead.
#pragma once

#include <torch/torch.h>

namespace depthlab::train {

template <class Base, class Options, class State>
class FusedAdamT : public Base {
 public:
  using Base::Base;
  torch::Tensor step(torch::optim::Optimizer::LossClosure closure = nullptr) override;
  /// Tests: take ATen's multi-tensor path for CPU parameters too (LibTorch >= 2.4).
  void preferMultiTensorOnCpu(bool on) { m_multiTensorOnCpu = on; }
  /// The path the last step took: "cpu-kernel", "multi-tensor" or "torch::optim".
  const char* lastPath() const { return m_lastPath; }

 private:
  bool canFuse() const;
  bool canMultiTensor() const;
  State& stateOf(const torch::Tensor& p);
  void multiTensorStep();
  bool m_multiTensorOnCpu = false;
  const char* m_lastPath = "";
};

using FusedAdam =
    FusedAdamT<torch::optim::Adam, torch::optim::AdamOptions, torch::optim::AdamParamState>;
using FusedAdamW =
    FusedAdamT<torch::optim::AdamW, torch::optim::AdamWOptions, torch::optim::AdamWParamState>;

}  // namespace depthlab::train

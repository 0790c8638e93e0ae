// Adam and AdamW whose step makes one fused CPU pass per parameter (kernels::adamUpdate)
// instead of torch::optim's eight tensor passes. They are torch::optim::Adam / AdamW: same
// options, same per-parameter state objects (checkpoints save and load exactly as before),
// same arithmetic. A step with the fused kernels switched off, or with any parameter off the
// CPU, not float32, not contiguous, with a sparse gradient, or with amsgrad on, runs
// torch::optim's own implementation instead.
#pragma once

#include <torch/torch.h>

namespace depthlab::train {

template <class Base, class Options, class State>
class FusedAdamT : public Base {
 public:
  using Base::Base;
  torch::Tensor step(torch::optim::Optimizer::LossClosure closure = nullptr) override;

 private:
  bool canFuse() const;
};

using FusedAdam =
    FusedAdamT<torch::optim::Adam, torch::optim::AdamOptions, torch::optim::AdamParamState>;
using FusedAdamW =
    FusedAdamT<torch::optim::AdamW, torch::optim::AdamWOptions, torch::optim::AdamWParamState>;

}  // namespace depthlab::train

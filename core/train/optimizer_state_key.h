// The key torch::optim files a parameter's state under: its TensorImpl, in LibTorch 1.x as the
// address printed to a string (c10::guts::to_string, an ostream <<), in 2.x the pointer itself.
// Used by the fused Adam step and by checkpoints, which read and create that state directly.
#pragma once

#include <torch/torch.h>

#include <sstream>
#include <string>
#include <type_traits>

namespace depthlab::train {

/// The key type of this LibTorch's Optimizer::state() map.
using OptimizerStateKey =
    std::decay_t<decltype(std::declval<torch::optim::Optimizer&>().state())>::key_type;

template <class Key = OptimizerStateKey>
Key optimizerStateKey(const torch::Tensor& p) {
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream s;
    s << p.unsafeGetTensorImpl();
    return s.str();
  } else {
    return static_cast<Key>(p.unsafeGetTensorImpl());
  }
}

}  // namespace depthlab::train

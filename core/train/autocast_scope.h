// bf16 autocast on CUDA for one scope, restored on exit. Uses the device-typed autocast API of
// LibTorch >= 2.4 (set_autocast_enabled / set_autocast_dtype) and the older global one
// (set_enabled / set_autocast_gpu_dtype, deprecated in 2.4) before that. A no-op when off.
// Header-only; included by torch-using core sources only.
#pragma once

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

namespace depthlab::train {

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define DEPTHLAB_AUTOCAST_DEVICE_API 1
#endif

class AutocastScope {
 public:
  explicit AutocastScope(bool on) : m_on(on) {
    if (!m_on) return;
#ifdef DEPTHLAB_AUTOCAST_DEVICE_API
    m_wasEnabled = at::autocast::is_autocast_enabled(at::kCUDA);
    m_wasDtype = at::autocast::get_autocast_dtype(at::kCUDA);
    at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
    at::autocast::set_autocast_enabled(at::kCUDA, true);
#else
    m_wasEnabled = at::autocast::is_enabled();
    m_wasDtype = at::autocast::get_autocast_gpu_dtype();
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
    at::autocast::set_enabled(true);
#endif
  }
  ~AutocastScope() {
    if (!m_on) return;
#ifdef DEPTHLAB_AUTOCAST_DEVICE_API
    at::autocast::set_autocast_enabled(at::kCUDA, m_wasEnabled);
    at::autocast::set_autocast_dtype(at::kCUDA, m_wasDtype);
#else
    at::autocast::set_enabled(m_wasEnabled);
    at::autocast::set_autocast_gpu_dtype(m_wasDtype);
#endif
    // The cast weights are cached for the scope only (they change at every optimizer step).
    if (!m_wasEnabled) at::autocast::clear_cache();
  }
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool m_on;
  bool m_wasEnabled = false;
  at::ScalarType m_wasDtype = at::kBFloat16;
};

}  // namespace depthlab::train

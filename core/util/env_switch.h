// On/off switches read from the environment (DEPTHLAB_CUDA_KERNELS, DEPTHLAB_CUDA_GRAPHS, ...).
// Header-only, no torch.
#pragma once

#include <cstdlib>
#include <cstring>

namespace depthlab::util {

/// "0" in `name` turns the switch off, "1" on; unset or anything else keeps `fallback`.
inline bool envSwitch(const char* name, bool fallback) {
  const char* v = std::getenv(name);
  if (v && std::strcmp(v, "0") == 0) return false;
  if (v && std::strcmp(v, "1") == 0) return true;
  return fallback;
}

}  // namespace depthlab::util

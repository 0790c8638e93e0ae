// libFuzzer target: a .safetensors file (header JSON, dtypes, shapes, offsets). Any input must
// load or end in SafetensorsError, never a crash, an over-read or a huge allocation.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/depthlab-fuzz-st-" + std::to_string(getpid());
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    auto tensors = depthlab::io::loadSafetensors(path);
    for (auto& [name, t] : tensors) (void)t.sum();
  } catch (const depthlab::io::SafetensorsError&) {
  }
  return 0;
}

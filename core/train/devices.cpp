// See devices.h.
#include "train/devices.h"

#include <torch/torch.h>

#include <cstdio>
#include <thread>

namespace depthlab::train {

std::vector<DeviceInfo> availableDevices() {
  std::vector<DeviceInfo> out;
  out.push_back({"cpu", "CPU (" + std::to_string(std::thread::hardware_concurrency()) + " cores)"});
  if (torch::cuda::is_available()) {
    // Names and memory from nvidia-smi when present (no CUDA headers needed at build time).
    std::vector<std::string> names;
    if (FILE* p = popen("nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null", "r")) {
      char line[512];
      while (std::fgets(line, sizeof(line), p)) {
        std::string s(line);
        while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
        names.push_back(s);
      }
      pclose(p);
    }
    for (size_t i = 0; i < torch::cuda::device_count(); ++i) {
      out.push_back({"cuda:" + std::to_string(i),
                     "cuda:" + std::to_string(i) + " " + (i < names.size() ? names[i] : std::string("CUDA GPU"))});
    }
  }
  return out;
}

}  // namespace depthlab::train

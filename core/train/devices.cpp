// See devices.h.
#include "train/devices.h"

#include "util/run_command.h"

#include <torch/torch.h>

#include <sstream>
#include <thread>

namespace depthlab::train {

std::vector<DeviceInfo> availableDevices() {
  std::vector<DeviceInfo> out;
  out.push_back({"cpu", "CPU (" + std::to_string(std::thread::hardware_concurrency()) + " cores)"});
  if (torch::cuda::is_available()) {
    // Names and memory from nvidia-smi when present (no CUDA headers needed at build time).
    std::vector<std::string> names;
    std::istringstream smi(
        util::runCommand("nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null").output);
    for (std::string line; std::getline(smi, line);) names.push_back(line);
    for (size_t i = 0; i < torch::cuda::device_count(); ++i) {
      out.push_back({"cuda:" + std::to_string(i),
                     "cuda:" + std::to_string(i) + " " + (i < names.size() ? names[i] : std::string("CUDA GPU"))});
    }
  }
  return out;
}

}  // namespace depthlab::train

// See devices.h.
#include "train/devices.h"

#include <torch/torch.h>

#include <thread>

namespace depthlab::train {

std::vector<DeviceInfo> availableDevices() {
  std::vector<DeviceInfo> out;
  out.push_back({"cpu", "CPU (" + std::to_string(std::thread::hardware_concurrency()) + " cores)"});
  if (torch::cuda::is_available()) {
    for (size_t i = 0; i < torch::cuda::device_count(); ++i) {
      out.push_back({"cuda:" + std::to_string(i), "CUDA GPU " + std::to_string(i)});
    }
  }
  return out;
}

}  // namespace depthlab::train

// Devices this LibTorch can train on, for the set-up panel and the CLI. Torch-free header.
#pragma once

#include <string>
#include <vector>

namespace depthlab::train {

struct DeviceInfo {
  std::string id;           // "cpu", "cuda:0"
  std::string description;  // what the user sees
};

/// CPU always; one entry per CUDA device when LibTorch was built with CUDA and sees a GPU.
std::vector<DeviceInfo> availableDevices();

}  // namespace depthlab::train

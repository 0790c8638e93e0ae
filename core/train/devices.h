// Devices this LibTorch can train on, for the set-up panel and the CLI. Torch-free header.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace depthlab::train {

struct DeviceInfo {
  std::string id;           // "cpu", "cuda:0"
  std::string description;  // what the user sees
};

/// CPU always; one entry per CUDA device when LibTorch was built with CUDA and sees a GPU.
std::vector<DeviceInfo> availableDevices();

/// The product name of CUDA device `index` ("NVIDIA H200"), "" when unknown.
std::string cudaDeviceName(int index);
/// Free and total bytes of CUDA device `index`; {0, 0} when unknown (a build without the CUDA
/// kernels asks nvidia-smi).
std::pair<size_t, size_t> cudaMemory(int index);

}  // namespace depthlab::train

// See devices.h.
#include "train/devices.h"

#include "util/run_command.h"

#include <torch/torch.h>

#ifdef DEPTHLAB_WITH_CUDA
#include "kernels/cuda/cuda_kernels.h"
#endif

#include <cstdio>
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
        util::runProgram({"nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader"})
            .output);
    for (std::string line; std::getline(smi, line);) names.push_back(line);
    const size_t count = static_cast<size_t>(torch::cuda::device_count());
    for (size_t i = 0; i < count; ++i) {
      std::string name = i < names.size() ? names[i] : std::string("CUDA GPU");
#ifdef DEPTHLAB_WITH_CUDA
      const auto info = kernels::cuda::deviceInfo(static_cast<int>(i));
      if (!info.name.empty()) {
        char mem[64];
        std::snprintf(mem, sizeof(mem), ", %.0f of %.0f GiB free", info.freeBytes / 1073741824.0,
                      info.totalBytes / 1073741824.0);
        name = info.name + mem;
      }
#endif
      out.push_back({"cuda:" + std::to_string(i), "cuda:" + std::to_string(i) + " " + name});
    }
  }
  return out;
}

namespace {
// One line of `nvidia-smi --query-gpu=FIELD` for device `index`.
std::string smiField(const std::string& field, int index) {
  auto r = util::runProgram({"nvidia-smi", "--query-gpu=" + field,
                             "--format=csv,noheader,nounits", "-i", std::to_string(index)});
  std::string line = r.status == 0 ? r.output.substr(0, r.output.find('\n')) : std::string();
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return line;
}
}  // namespace

std::string cudaDeviceName(int index) {
#ifdef DEPTHLAB_WITH_CUDA
  auto info = kernels::cuda::deviceInfo(index);
  if (!info.name.empty()) return info.name;
#endif
  return smiField("name", index);
}

std::pair<size_t, size_t> cudaMemory(int index) {
#ifdef DEPTHLAB_WITH_CUDA
  auto info = kernels::cuda::deviceInfo(index);
  if (info.totalBytes > 0) return {info.freeBytes, info.totalBytes};
#endif
  try {
    const double mib = 1024.0 * 1024.0;
    return {static_cast<size_t>(std::stod(smiField("memory.free", index)) * mib),
            static_cast<size_t>(std::stod(smiField("memory.total", index)) * mib)};
  } catch (const std::exception&) {
    return {0, 0};
  }
}

}  // namespace depthlab::train

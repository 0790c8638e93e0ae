// CUDA device facts for the trainer and the benchmarks (name, compute capability, free and total
// memory); see cuda_kernels.h. Host code only.
#include "kernels/cuda/cuda_common.cuh"

namespace depthlab::kernels::cuda {

DeviceInfo deviceInfo(int index) {
  DeviceInfo info;
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, index) != cudaSuccess) {
    cudaGetLastError();
    return info;
  }
  info.name = p.name;
  info.major = p.major;
  info.minor = p.minor;
  info.multiprocessors = p.multiProcessorCount;
  int previous = 0;
  if (cudaGetDevice(&previous) == cudaSuccess && cudaSetDevice(index) == cudaSuccess) {
    cudaMemGetInfo(&info.freeBytes, &info.totalBytes);
    cudaSetDevice(previous);
  }
  cudaGetLastError();  // leave no sticky error behind
  return info;
}

}  // namespace depthlab::kernels::cuda

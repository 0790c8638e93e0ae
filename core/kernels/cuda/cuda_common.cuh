// Shared device helpers of DepthLab's CUDA kernels: float conversions for the supported storage
// types, warp/block reductions, launch checks and the dtype dispatch. Included by .cu files only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/cuda/cuda_kernels.h"

namespace depthlab::kernels::cuda::detail {

constexpr int kThreads = 256;  // threads per block everywhere (a multiple of 32)

__device__ __forceinline__ float toFloat(float v) { return v; }
__device__ __forceinline__ float toFloat(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float toFloat(__half v) { return __half2float(v); }

template <class T> __device__ __forceinline__ T fromFloat(float v);
template <> __device__ __forceinline__ float fromFloat<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 fromFloat<__nv_bfloat16>(float v) {
  return __float2bfloat16(v);
}
template <> __device__ __forceinline__ __half fromFloat<__half>(float v) { return __float2half(v); }

struct Sum { __device__ float operator()(float a, float b) const { return a + b; } };
struct Max { __device__ float operator()(float a, float b) const { return fmaxf(a, b); } };

/// Reduces `v` over the block; every thread gets the result. `shared` holds 32 floats.
/// Call from every thread of the block (it synchronises).
template <class Op>
__device__ float blockReduce(float v, float* shared, Op op, float identity) {
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warps = (blockDim.x + 31) >> 5;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? shared[lane] : identity;
    for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    if (lane == 0) shared[0] = v;
  }
  __syncthreads();
  const float r = shared[0];
  __syncthreads();  // `shared` may be reused right after
  return r;
}

inline unsigned gridFor(int64_t units, int64_t perBlock = kThreads, int64_t cap = 65535) {
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(cap, (units + perBlock - 1) / perBlock)));
}

inline void check(const char* what) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA kernel ") + what + " failed: " + cudaGetErrorString(e));
  }
}

inline cudaStream_t stream(Stream s) { return static_cast<cudaStream_t>(s); }

/// Calls f with a null pointer of the storage type of `t` (float, __nv_bfloat16, __half).
template <class F>
void dispatch(DType t, F&& f) {
  switch (t) {
    case DType::Float32: f(static_cast<float*>(nullptr)); break;
    case DType::BFloat16: f(static_cast<__nv_bfloat16*>(nullptr)); break;
    case DType::Float16: f(static_cast<__half*>(nullptr)); break;
  }
}

}  // namespace depthlab::kernels::cuda::detail

// The SwiGLU product silu(g) * u and its backward on CUDA, elementwise in float32 over
// float32 / bf16 / fp16 storage; see cuda_kernels.h. One pass each way instead of ATen's
// silu + mul (and their four backward passes).
#include "kernels/cuda/cuda_common.cuh"

namespace depthlab::kernels::cuda {

using namespace detail;

namespace {

__device__ __forceinline__ float sigmoid(float v) { return 1.f / (1.f + expf(-v)); }

template <class T>
__global__ void swigluForwardKernel(const T* __restrict__ g, const T* __restrict__ u,
                                    T* __restrict__ h, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float gv = toFloat(g[i]);
    h[i] = fromFloat<T>(gv * sigmoid(gv) * toFloat(u[i]));
  }
}

template <class T>
__global__ void swigluBackwardKernel(const T* __restrict__ dh, const T* __restrict__ g,
                                     const T* __restrict__ u, T* __restrict__ dg,
                                     T* __restrict__ du, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float gv = toFloat(g[i]), uv = toFloat(u[i]), d = toFloat(dh[i]);
    const float sg = sigmoid(gv);
    const float silu = gv * sg;
    dg[i] = fromFloat<T>(d * uv * sg * (1.f + gv * (1.f - sg)));
    du[i] = fromFloat<T>(d * silu);
  }
}

}  // namespace

void swigluForward(DType t, const void* g, const void* u, void* h, int64_t n, Stream s) {
  if (n == 0) return;
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    swigluForwardKernel<T><<<gridFor(n), kThreads, 0, stream(s)>>>(
        static_cast<const T*>(g), static_cast<const T*>(u), static_cast<T*>(h), n);
  });
  check("swigluForward");
}

void swigluBackward(DType t, const void* dh, const void* g, const void* u, void* dg, void* du,
                    int64_t n, Stream s) {
  if (n == 0) return;
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    swigluBackwardKernel<T><<<gridFor(n), kThreads, 0, stream(s)>>>(
        static_cast<const T*>(dh), static_cast<const T*>(g), static_cast<const T*>(u),
        static_cast<T*>(dg), static_cast<T*>(du), n);
  });
  check("swigluBackward");
}

}  // namespace depthlab::kernels::cuda

// The SwiGLU product silu(g) * u and its backward on CUDA, elementwise in float32 over
// float32 / bf16 / fp16 storage; see cuda_kernels.h. One pass each way instead of ATen's
// silu + mul (and their four backward passes). 16-byte loads and stores (8 bf16 or 4 floats per
// thread) where the pointers are aligned and n divides; a scalar kernel otherwise.
#include <cstdint>

#include "kernels/cuda/cuda_common.cuh"

namespace depthlab::kernels::cuda {

using namespace detail;

namespace {

template <class T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

__device__ __forceinline__ float sigmoid(float v) { return 1.f / (1.f + expf(-v)); }

// V values per thread and iteration; V = 1 is the scalar kernel.
template <class T, int V>
__global__ void swigluForwardKernel(const T* __restrict__ g, const T* __restrict__ u,
                                    T* __restrict__ h, int64_t packs) {
  using P = Pack<T, V>;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < packs;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const P gp = reinterpret_cast<const P*>(g)[i], up = reinterpret_cast<const P*>(u)[i];
    P hp;
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const float gv = toFloat(gp.v[k]);
      hp.v[k] = fromFloat<T>(gv * sigmoid(gv) * toFloat(up.v[k]));
    }
    reinterpret_cast<P*>(h)[i] = hp;
  }
}

template <class T, int V>
__global__ void swigluBackwardKernel(const T* __restrict__ dh, const T* __restrict__ g,
                                     const T* __restrict__ u, T* __restrict__ dg,
                                     T* __restrict__ du, int64_t packs) {
  using P = Pack<T, V>;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < packs;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const P dp = reinterpret_cast<const P*>(dh)[i], gp = reinterpret_cast<const P*>(g)[i],
            up = reinterpret_cast<const P*>(u)[i];
    P dgp, dup;
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const float gv = toFloat(gp.v[k]), uv = toFloat(up.v[k]), d = toFloat(dp.v[k]);
      const float sg = sigmoid(gv);
      dgp.v[k] = fromFloat<T>(d * uv * sg * (1.f + gv * (1.f - sg)));
      dup.v[k] = fromFloat<T>(d * gv * sg);
    }
    reinterpret_cast<P*>(dg)[i] = dgp;
    reinterpret_cast<P*>(du)[i] = dup;
  }
}

bool aligned16(std::initializer_list<const void*> ptrs) {
  for (const void* p : ptrs) {
    if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0) return false;
  }
  return true;
}

// Calls launch.template operator()<V>(packs) with the widest V the data allows.
template <class T, class Launch>
void vectorised(int64_t n, bool aligned, Launch&& launch) {
  constexpr int V = 16 / sizeof(T);
  if (aligned && n % V == 0) {
    launch(std::integral_constant<int, V>(), n / V);
  } else {
    launch(std::integral_constant<int, 1>(), n);
  }
}

}  // namespace

void swigluForward(DType t, const void* g, const void* u, void* h, int64_t n, Stream s) {
  if (n == 0) return;
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    vectorised<T>(n, aligned16({g, u, h}), [&](auto v, int64_t packs) {
      swigluForwardKernel<T, decltype(v)::value>
          <<<gridFor(packs, kThreads, 132 * 16), kThreads, 0, stream(s)>>>(
              static_cast<const T*>(g), static_cast<const T*>(u), static_cast<T*>(h), packs);
    });
  });
  check("swigluForward");
}

void swigluBackward(DType t, const void* dh, const void* g, const void* u, void* dg, void* du,
                    int64_t n, Stream s) {
  if (n == 0) return;
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    vectorised<T>(n, aligned16({dh, g, u, dg, du}), [&](auto v, int64_t packs) {
      swigluBackwardKernel<T, decltype(v)::value>
          <<<gridFor(packs, kThreads, 132 * 16), kThreads, 0, stream(s)>>>(
              static_cast<const T*>(dh), static_cast<const T*>(g), static_cast<const T*>(u),
              static_cast<T*>(dg), static_cast<T*>(du), packs);
    });
  });
  check("swigluBackward");
}

}  // namespace depthlab::kernels::cuda

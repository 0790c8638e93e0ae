// Rotate-half RoPE fused with the head split on CUDA: (B, T, H*D) -> (B, H, T, D) and back;
// see cuda_kernels.h. One thread per output element, math in float32, cos/sin tables float32.
// y_d = x_d cos_d + r_d sin_d with r = (-x_{d+D/2}, x_{d-D/2});
// dx_d = dy_d cos_d + (d < D/2 ? dy_{d+D/2} sin_{d+D/2} : -dy_{d-D/2} sin_{d-D/2}).
#include "kernels/cuda/cuda_common.cuh"

namespace depthlab::kernels::cuda {

using namespace detail;

namespace {

template <class T>
__global__ void ropeForwardKernel(const T* __restrict__ x, const float* __restrict__ cos,
                                  const float* __restrict__ sin, T* __restrict__ y, int64_t B,
                                  int64_t Tn, int64_t H, int64_t D) {
  const int64_t n = B * H * Tn * D, half = D / 2;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t d = i % D, t = (i / D) % Tn, h = (i / (D * Tn)) % H, b = i / (D * Tn * H);
    const T* xr = x + ((b * Tn + t) * H + h) * D;  // the head's row in (B, T, H, D)
    const float rot = d < half ? -toFloat(xr[d + half]) : toFloat(xr[d - half]);
    y[i] = fromFloat<T>(toFloat(xr[d]) * cos[t * D + d] + rot * sin[t * D + d]);
  }
}

template <class T>
__global__ void ropeBackwardKernel(const T* __restrict__ dy, const float* __restrict__ cos,
                                   const float* __restrict__ sin, T* __restrict__ dx, int64_t B,
                                   int64_t Tn, int64_t H, int64_t D) {
  const int64_t n = B * Tn * H * D, half = D / 2;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t d = i % D, h = (i / D) % H, t = (i / (D * H)) % Tn, b = i / (D * H * Tn);
    const T* dyr = dy + ((b * H + h) * Tn + t) * D;  // the head's row in (B, H, T, D)
    const float* c = cos + t * D;
    const float* s = sin + t * D;
    const float other = d < half ? toFloat(dyr[d + half]) * s[d + half]
                                 : -toFloat(dyr[d - half]) * s[d - half];
    dx[i] = fromFloat<T>(toFloat(dyr[d]) * c[d] + other);
  }
}

}  // namespace

void ropeSplitHeadsForward(DType t, const void* x, const float* cos, const float* sin, void* y,
                           int64_t B, int64_t Tn, int64_t H, int64_t D, Stream s) {
  const int64_t n = B * Tn * H * D;
  if (n == 0) return;
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    ropeForwardKernel<T><<<gridFor(n), kThreads, 0, stream(s)>>>(
        static_cast<const T*>(x), cos, sin, static_cast<T*>(y), B, Tn, H, D);
  });
  check("ropeSplitHeadsForward");
}

void ropeSplitHeadsBackward(DType t, const void* dy, const float* cos, const float* sin, void* dx,
                            int64_t B, int64_t Tn, int64_t H, int64_t D, Stream s) {
  const int64_t n = B * Tn * H * D;
  if (n == 0) return;
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    ropeBackwardKernel<T><<<gridFor(n), kThreads, 0, stream(s)>>>(
        static_cast<const T*>(dy), cos, sin, static_cast<T*>(dx), B, Tn, H, D);
  });
  check("ropeSplitHeadsBackward");
}

}  // namespace depthlab::kernels::cuda

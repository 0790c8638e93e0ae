// Rotate-half RoPE fused with the head split on CUDA: (B, T, H*D) -> (B, H, T, D) and back;
// see cuda_kernels.h. One block per token row (b, t); each thread rotates pairs (j, j + D/2) of
// one head, so reads and writes run along the head dimension (coalesced) and the index math is
// 32-bit and per block, not per element. Math in float32, cos/sin tables float32.
// y_j = x_j c_j - x_{j+h} s_j,  y_{j+h} = x_{j+h} c_{j+h} + x_j s_{j+h}             (h = D/2)
// dx_j = dy_j c_j + dy_{j+h} s_{j+h},  dx_{j+h} = dy_{j+h} c_{j+h} - dy_j s_j
#include "kernels/cuda/cuda_common.cuh"

namespace depthlab::kernels::cuda {

using namespace detail;

namespace {

constexpr int kRopeThreads = 128;

// x row (b, t) is x + row * H * D; y head h of it at y + ((b * H + h) * T + t) * D.
template <class T>
__global__ void ropeForwardKernel(const T* __restrict__ x, const float* __restrict__ cos,
                                  const float* __restrict__ sin, T* __restrict__ y, int Tn,
                                  int H, int D) {
  const int row = blockIdx.x, b = row / Tn, t = row % Tn, half = D / 2;
  const T* xr = x + static_cast<int64_t>(row) * H * D;
  const float* c = cos + static_cast<int64_t>(t) * D;
  const float* s = sin + static_cast<int64_t>(t) * D;
  for (int p = threadIdx.x; p < H * half; p += blockDim.x) {
    const int h = p / half, j = p % half;
    const float a = toFloat(xr[h * D + j]), z = toFloat(xr[h * D + j + half]);
    T* yr = y + ((static_cast<int64_t>(b) * H + h) * Tn + t) * D;
    yr[j] = fromFloat<T>(a * c[j] - z * s[j]);
    yr[j + half] = fromFloat<T>(z * c[j + half] + a * s[j + half]);
  }
}

// dy (B, H, T, D) with strides (sB, sH, sT, 1) in elements; dx row (b, t) contiguous.
template <class T>
__global__ void ropeBackwardKernel(const T* __restrict__ dy, const float* __restrict__ cos,
                                   const float* __restrict__ sin, T* __restrict__ dx, int Tn,
                                   int H, int D, int64_t sB, int64_t sH, int64_t sT) {
  const int row = blockIdx.x, b = row / Tn, t = row % Tn, half = D / 2;
  T* dxr = dx + static_cast<int64_t>(row) * H * D;
  const float* c = cos + static_cast<int64_t>(t) * D;
  const float* s = sin + static_cast<int64_t>(t) * D;
  for (int p = threadIdx.x; p < H * half; p += blockDim.x) {
    const int h = p / half, j = p % half;
    const T* dyr = dy + b * sB + h * sH + t * sT;
    const float a = toFloat(dyr[j]), z = toFloat(dyr[j + half]);
    dxr[h * D + j] = fromFloat<T>(a * c[j] + z * s[j + half]);
    dxr[h * D + j + half] = fromFloat<T>(z * c[j + half] - a * s[j]);
  }
}

void checkShape(int64_t B, int64_t Tn, int64_t H, int64_t D) {
  if (D % 2 != 0 || B * Tn > 0x7fffffff || H * D > 0x7fffffff || Tn > 0x7fffffff) {
    throw std::invalid_argument("ropeSplitHeads: odd head dimension or too many rows");
  }
}

}  // namespace

void ropeSplitHeadsForward(DType t, const void* x, const float* cos, const float* sin, void* y,
                           int64_t B, int64_t Tn, int64_t H, int64_t D, Stream s) {
  if (B * Tn * H * D == 0) return;
  checkShape(B, Tn, H, D);
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    ropeForwardKernel<T><<<static_cast<unsigned>(B * Tn), kRopeThreads, 0, stream(s)>>>(
        static_cast<const T*>(x), cos, sin, static_cast<T*>(y), static_cast<int>(Tn),
        static_cast<int>(H), static_cast<int>(D));
  });
  check("ropeSplitHeadsForward");
}

void ropeSplitHeadsBackward(DType t, const void* dy, const int64_t* dyStrides, const float* cos,
                            const float* sin, void* dx, int64_t B, int64_t Tn, int64_t H,
                            int64_t D, Stream s) {
  if (B * Tn * H * D == 0) return;
  checkShape(B, Tn, H, D);
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    ropeBackwardKernel<T><<<static_cast<unsigned>(B * Tn), kRopeThreads, 0, stream(s)>>>(
        static_cast<const T*>(dy), cos, sin, static_cast<T*>(dx), static_cast<int>(Tn),
        static_cast<int>(H), static_cast<int>(D), dyStrides[0], dyStrides[1], dyStrides[2]);
  });
  check("ropeSplitHeadsBackward");
}

}  // namespace depthlab::kernels::cuda

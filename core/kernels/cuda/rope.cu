// Rotate-half RoPE fused with the head split on CUDA: (B, T, H*D) -> (B, H, T, D) and back;
// see cuda_kernels.h. One block per token row (b, t); each thread rotates pairs (j, j + D/2) of
// one head, so reads and writes run along the head dimension (coalesced) and the index math is
// 32-bit and per block, not per element. Math in float32, cos/sin tables float32.
// The vector variant (asked for by the caller: vectorLoads) moves 16 bytes per load
// and store: each thread rotates 16 / sizeof(T) consecutive pairs of one head, threads laid over
// all rows at once; it applies when D/2 is a multiple of that and every pointer and stride is
// 16-byte aligned, else the scalar kernels run.
// y_j = x_j c_j - x_{j+h} s_j,  y_{j+h} = x_{j+h} c_{j+h} + x_j s_{j+h}             (h = D/2)
// dx_j = dy_j c_j + dy_{j+h} s_{j+h},  dx_{j+h} = dy_{j+h} c_{j+h} - dy_j s_j
#include <cstdint>
#include <initializer_list>

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

// 16 bytes of T: the unit of the vector kernels' loads and stores.
template <class T>
struct alignas(16) Vec {
  static constexpr int kSize = 16 / sizeof(T);
  T v[kSize];
};

// n floats from a 16-byte aligned address (n a multiple of 4).
template <int N>
__device__ __forceinline__ void loadFloats(const float* p, float (&out)[N]) {
  static_assert(N % 4 == 0, "whole float4s");
#pragma unroll
  for (int i = 0; i < N; i += 4) {
    const float4 f = *reinterpret_cast<const float4*>(p + i);
    out[i] = f.x;
    out[i + 1] = f.y;
    out[i + 2] = f.z;
    out[i + 3] = f.w;
  }
}

// Vector unit u of all B * T * H * (D/2) / V: row (b, t), head h, pairs j0 .. j0 + V - 1.
struct VecIndex {
  int b, t, h, j0;
  __device__ VecIndex(int u, int Tn, int H, int half, int V) {
    const int perHead = half / V, perRow = H * perHead, row = u / perRow, rem = u % perRow;
    b = row / Tn;
    t = row % Tn;
    h = rem / perHead;
    j0 = (rem % perHead) * V;
  }
};

// One thread's operands: the V pairs (a_i, z_i) = (row[j0 + i], row[j0 + half + i]) of one
// head's row (16-byte aligned) and cos / sin of position t at j0 + i and j0 + half + i.
template <class T>
struct VecOperands {
  static constexpr int V = Vec<T>::kSize;
  Vec<T> a, z;
  float c0[V], c1[V], s0[V], s1[V];
  __device__ VecOperands(const T* row, const float* cos, const float* sin, int t, int D, int j0) {
    const int half = D / 2;
    a = *reinterpret_cast<const Vec<T>*>(row + j0);
    z = *reinterpret_cast<const Vec<T>*>(row + j0 + half);
    const int64_t tab = static_cast<int64_t>(t) * D + j0;
    loadFloats(cos + tab, c0);
    loadFloats(cos + tab + half, c1);
    loadFloats(sin + tab, s0);
    loadFloats(sin + tab + half, s1);
  }
};

template <class T>
__global__ void ropeForwardVecKernel(const T* __restrict__ x, const float* __restrict__ cos,
                                     const float* __restrict__ sin, T* __restrict__ y, int units,
                                     int Tn, int H, int D) {
  constexpr int V = Vec<T>::kSize;
  const int u = blockIdx.x * blockDim.x + threadIdx.x;
  if (u >= units) return;
  const int half = D / 2;
  const VecIndex at(u, Tn, H, half, V);
  const T* xr = x + (static_cast<int64_t>(at.b) * Tn + at.t) * H * D + at.h * D;
  const VecOperands<T> o(xr, cos, sin, at.t, D, at.j0);
  Vec<T> lo, hi;
#pragma unroll
  for (int i = 0; i < V; ++i) {
    const float av = toFloat(o.a.v[i]), zv = toFloat(o.z.v[i]);
    lo.v[i] = fromFloat<T>(av * o.c0[i] - zv * o.s0[i]);
    hi.v[i] = fromFloat<T>(zv * o.c1[i] + av * o.s1[i]);
  }
  T* yr = y + ((static_cast<int64_t>(at.b) * H + at.h) * Tn + at.t) * D;
  *reinterpret_cast<Vec<T>*>(yr + at.j0) = lo;
  *reinterpret_cast<Vec<T>*>(yr + at.j0 + half) = hi;
}

template <class T>
__global__ void ropeBackwardVecKernel(const T* __restrict__ dy, const float* __restrict__ cos,
                                      const float* __restrict__ sin, T* __restrict__ dx,
                                      int units, int Tn, int H, int D, int64_t sB, int64_t sH,
                                      int64_t sT) {
  constexpr int V = Vec<T>::kSize;
  const int u = blockIdx.x * blockDim.x + threadIdx.x;
  if (u >= units) return;
  const int half = D / 2;
  const VecIndex at(u, Tn, H, half, V);
  const T* dyr = dy + at.b * sB + at.h * sH + at.t * sT;
  const VecOperands<T> o(dyr, cos, sin, at.t, D, at.j0);
  Vec<T> lo, hi;
#pragma unroll
  for (int i = 0; i < V; ++i) {
    const float av = toFloat(o.a.v[i]), zv = toFloat(o.z.v[i]);
    lo.v[i] = fromFloat<T>(av * o.c0[i] + zv * o.s1[i]);
    hi.v[i] = fromFloat<T>(zv * o.c1[i] - av * o.s0[i]);
  }
  T* dxr = dx + (static_cast<int64_t>(at.b) * Tn + at.t) * H * D + at.h * D;
  *reinterpret_cast<Vec<T>*>(dxr + at.j0) = lo;
  *reinterpret_cast<Vec<T>*>(dxr + at.j0 + half) = hi;
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// The vector kernels' conditions for storage type T: whole 16-byte units per half head, aligned
// pointers (the float tables too) and strides, and a unit count that fits 32-bit math.
template <class T>
bool vectorApplies(bool asked, int64_t B, int64_t Tn, int64_t H, int64_t D,
                   std::initializer_list<const void*> pointers,
                   std::initializer_list<int64_t> strides) {
  constexpr int V = Vec<T>::kSize;
  if (!asked || (D / 2) % V != 0) return false;
  for (const void* p : pointers) {
    if (!aligned16(p)) return false;
  }
  for (int64_t s : strides) {
    if (s % V != 0) return false;
  }
  return B * Tn * H * (D / 2) / V <= 0x7fffffff;
}

void checkShape(int64_t B, int64_t Tn, int64_t H, int64_t D) {
  if (D % 2 != 0 || B * Tn > 0x7fffffff || H * D > 0x7fffffff || Tn > 0x7fffffff) {
    throw std::invalid_argument("ropeSplitHeads: odd head dimension or too many rows");
  }
}

}  // namespace

void ropeSplitHeadsForward(DType t, const void* x, const float* cos, const float* sin, void* y,
                           int64_t B, int64_t Tn, int64_t H, int64_t D, bool vectorLoads,
                           Stream s) {
  if (B * Tn * H * D == 0) return;
  checkShape(B, Tn, H, D);
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    if (vectorApplies<T>(vectorLoads, B, Tn, H, D, {x, cos, sin, y}, {D})) {
      const int units = static_cast<int>(B * Tn * H * (D / 2) / Vec<T>::kSize);
      ropeForwardVecKernel<T><<<gridFor(units, kThreads, 0x7fffffff), kThreads, 0, stream(s)>>>(
          static_cast<const T*>(x), cos, sin, static_cast<T*>(y), units, static_cast<int>(Tn),
          static_cast<int>(H), static_cast<int>(D));
      return;
    }
    ropeForwardKernel<T><<<static_cast<unsigned>(B * Tn), kRopeThreads, 0, stream(s)>>>(
        static_cast<const T*>(x), cos, sin, static_cast<T*>(y), static_cast<int>(Tn),
        static_cast<int>(H), static_cast<int>(D));
  });
  check("ropeSplitHeadsForward");
}

void ropeSplitHeadsBackward(DType t, const void* dy, const int64_t* dyStrides, const float* cos,
                            const float* sin, void* dx, int64_t B, int64_t Tn, int64_t H,
                            int64_t D, bool vectorLoads, Stream s) {
  if (B * Tn * H * D == 0) return;
  checkShape(B, Tn, H, D);
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    if (vectorApplies<T>(vectorLoads, B, Tn, H, D, {dy, cos, sin, dx},
                         {D, dyStrides[0], dyStrides[1], dyStrides[2]})) {
      const int units = static_cast<int>(B * Tn * H * (D / 2) / Vec<T>::kSize);
      ropeBackwardVecKernel<T><<<gridFor(units, kThreads, 0x7fffffff), kThreads, 0, stream(s)>>>(
          static_cast<const T*>(dy), cos, sin, static_cast<T*>(dx), units, static_cast<int>(Tn),
          static_cast<int>(H), static_cast<int>(D), dyStrides[0], dyStrides[1], dyStrides[2]);
      return;
    }
    ropeBackwardKernel<T><<<static_cast<unsigned>(B * Tn), kRopeThreads, 0, stream(s)>>>(
        static_cast<const T*>(dy), cos, sin, static_cast<T*>(dx), static_cast<int>(Tn),
        static_cast<int>(H), static_cast<int>(D), dyStrides[0], dyStrides[1], dyStrides[2]);
  });
  check("ropeSplitHeadsBackward");
}

}  // namespace depthlab::kernels::cuda

// RMSNorm forward and backward on CUDA, the LNS factor folded in; see cuda_kernels.h. x, w and
// dx are float32 (the residual stream); y and dy float32 or, when the norm feeds a bf16 / fp16
// matmul under autocast, that type (the cast the matmul would do, fused).
// Fast path (C a multiple of 128, at most 2048 forward and 1024 backward, 16-byte aligned rows): one warp per row with the
// row in registers, float4 loads; the backward's warps keep their weight-gradient sums in
// registers and each block writes one partial row, summed by the caller (no atomics, the same
// result every run). Any other shape: one block per row, scalar loads.
#include <cstdint>

#include "kernels/cuda/cuda_common.cuh"

namespace depthlab::kernels::cuda {

using namespace detail;

namespace {

constexpr int kWarps = 8;                  // warps per block on the fast path
constexpr int64_t kMaxFastBlocks = 264;    // backward blocks (partial rows) on the fast path
constexpr int64_t kMaxPartials = 512;      // the generic backward's partial rows

template <class T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

__device__ __forceinline__ float warpSum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <class T>
__device__ __forceinline__ void load4(const T* p, float (&out)[4]) {
  const Pack<T, 4> pk = *reinterpret_cast<const Pack<T, 4>*>(p);
#pragma unroll
  for (int j = 0; j < 4; ++j) out[j] = toFloat(pk.v[j]);
}

template <class T>
__device__ __forceinline__ void store4(T* p, const float (&in)[4]) {
  Pack<T, 4> pk;
#pragma unroll
  for (int j = 0; j < 4; ++j) pk.v[j] = fromFloat<T>(in[j]);
  *reinterpret_cast<Pack<T, 4>*>(p) = pk;
}

// VPT = C / 128: groups of 4 columns per lane; lane l owns columns 4 * (l + 32 k) + 0..3.
// With `residual`: the row is x + residual, written to `sum` before it is normalised.
template <class TY, int VPT>
__global__ void forwardWarp(const float* __restrict__ x, const TY* __restrict__ residual,
                            float* __restrict__ sum, const float* __restrict__ w,
                            TY* __restrict__ y, float* __restrict__ rstd, int64_t N, float eps,
                            float scale) {
  constexpr int C = VPT * 128;
  const int lane = threadIdx.x & 31;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + (threadIdx.x >> 5);
  if (row >= N) return;
  const float* xr = x + row * C;
  float v[VPT][4];
  float ss = 0.f;
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    load4(xr + 4 * (lane + 32 * k), v[k]);
    if (residual) {
      float rv[4];
      load4(residual + row * C + 4 * (lane + 32 * k), rv);
#pragma unroll
      for (int j = 0; j < 4; ++j) v[k][j] += rv[j];
      store4(sum + row * C + 4 * (lane + 32 * k), v[k]);
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) ss += v[k][j] * v[k][j];
  }
  const float r = rsqrtf(warpSum(ss) / static_cast<float>(C) + eps);
  if (lane == 0) rstd[row] = r;
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    const int c = 4 * (lane + 32 * k);
    float wv[4], out[4];
    load4(w + c, wv);
#pragma unroll
    for (int j = 0; j < 4; ++j) out[j] = wv[j] * (v[k][j] * r) * scale;
    store4(y + row * C + c, out);
  }
}

// dx = scale * (g * r - x * r^3 * mean(g * x)), g = dy * w;  dw += scale * dy * x * r.
template <class TDY, int VPT>
// With `dsum` (the gradient of the sum, see forwardWarp) it is added to dx; with `dresidual`,
// dx is also written there in the residual's type.
__global__ void __launch_bounds__(kWarps * 32, 2) backwardWarp(const TDY* __restrict__ dy, const float* __restrict__ x,
                             const float* __restrict__ w, const float* __restrict__ rstd,
                             const float* __restrict__ dsum, float* __restrict__ dx,
                             TDY* __restrict__ dresidual, float* __restrict__ dwPartial, int64_t N,
                             float scale) {
  constexpr int C = VPT * 128;
  __shared__ float sdw[C];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float acc[VPT][4];  // this lane's weight-gradient sums; w is re-read per row (L1-resident)
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[k][j] = 0.f;
  }
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + warp; row < N;
       row += static_cast<int64_t>(gridDim.x) * kWarps) {
    float xv[VPT][4], dv[VPT][4], wv[VPT][4];
    float dot = 0.f;
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
      const int c = 4 * (lane + 32 * k);
      load4(x + row * C + c, xv[k]);
      load4(dy + row * C + c, dv[k]);
      load4(w + c, wv[k]);
#pragma unroll
      for (int j = 0; j < 4; ++j) dot += dv[k][j] * wv[k][j] * xv[k][j];
    }
    dot = warpSum(dot);
    const float r = rstd[row];
    const float kf = r * r * r * dot / static_cast<float>(C);
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
      const int c = 4 * (lane + 32 * k);
      float out[4], ds[4] = {0.f, 0.f, 0.f, 0.f};
      if (dsum) load4(dsum + row * C + c, ds);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        out[j] = scale * (dv[k][j] * wv[k][j] * r - xv[k][j] * kf) + ds[j];
        acc[k][j] += scale * dv[k][j] * xv[k][j] * r;
      }
      store4(dx + row * C + c, out);
      if (dresidual) store4(dresidual + row * C + c, out);
    }
  }
  // The block's warps add their sums into shared memory one after another (a fixed order).
  for (int c = threadIdx.x; c < C; c += blockDim.x) sdw[c] = 0.f;
  __syncthreads();
  for (int turn = 0; turn < kWarps; ++turn) {
    if (warp == turn) {
#pragma unroll
      for (int k = 0; k < VPT; ++k) {
#pragma unroll
        for (int j = 0; j < 4; ++j) sdw[4 * (lane + 32 * k) + j] += acc[k][j];
      }
    }
    __syncthreads();
  }
  for (int c = threadIdx.x; c < C; c += blockDim.x) dwPartial[blockIdx.x * C + c] = sdw[c];
}

template <class TY>
__global__ void forwardGeneric(const float* __restrict__ xIn, const TY* __restrict__ residual,
                               float* __restrict__ sum, const float* __restrict__ w,
                               TY* __restrict__ y, float* __restrict__ rstd, int64_t N, int64_t C,
                               float eps, float scale) {
  __shared__ float shared[32];
  for (int64_t row = blockIdx.x; row < N; row += gridDim.x) {
    if (residual) {  // sum = x + residual, then normalise the sum (each thread its own columns)
      for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
        sum[row * C + c] = xIn[row * C + c] + toFloat(residual[row * C + c]);
      }
    }
    const float* xr = (residual ? sum : xIn) + row * C;
    TY* yr = y + row * C;
    float ss = 0.f;
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) ss += xr[c] * xr[c];
    ss = blockReduce(ss, shared, Sum(), 0.f);
    const float r = rsqrtf(ss / static_cast<float>(C) + eps);
    if (threadIdx.x == 0) rstd[row] = r;
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
      yr[c] = fromFloat<TY>(w[c] * (xr[c] * r) * scale);
    }
  }
}

// Block b handles rows [b * rowsPerBlock, ...) and owns row b of dwPartial.
template <class TDY>
__global__ void backwardGeneric(const TDY* __restrict__ dy, const float* __restrict__ x,
                                const float* __restrict__ w, const float* __restrict__ rstd,
                                const float* __restrict__ dsum, float* __restrict__ dx,
                                TDY* __restrict__ dresidual, float* __restrict__ dwPartial,
                                int64_t N, int64_t C, float scale, int64_t rowsPerBlock) {
  __shared__ float shared[32];
  float* part = dwPartial + blockIdx.x * C;
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) part[c] = 0.f;
  const int64_t begin = blockIdx.x * rowsPerBlock;
  const int64_t end = begin + rowsPerBlock < N ? begin + rowsPerBlock : N;
  for (int64_t row = begin; row < end; ++row) {
    const TDY* dyr = dy + row * C;
    const float* xr = x + row * C;
    float* dxr = dx + row * C;
    const float r = rstd[row];
    float dot = 0.f;
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) dot += toFloat(dyr[c]) * w[c] * xr[c];
    dot = blockReduce(dot, shared, Sum(), 0.f);
    const float k = r * r * r * dot / static_cast<float>(C);
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
      const float d = toFloat(dyr[c]);
      const float g = scale * (d * w[c] * r - xr[c] * k) + (dsum ? dsum[row * C + c] : 0.f);
      dxr[c] = g;
      if (dresidual) dresidual[row * C + c] = fromFloat<TDY>(g);
      part[c] += scale * d * xr[c] * r;  // this thread alone owns column c of `part`
    }
  }
}

int64_t genericRowsPerBlock(int64_t N) {
  return std::max<int64_t>(1, (N + kMaxPartials - 1) / kMaxPartials);
}

constexpr int64_t kMaxFastForward = 2048, kMaxFastBackward = 1024;  // registers per lane

bool fastShape(int64_t C, int64_t maxC) { return C % 128 == 0 && C <= maxC; }

bool fastPath(int64_t C, int64_t maxC, std::initializer_list<const void*> ptrs) {
  if (!fastShape(C, maxC)) return false;
  for (const void* p : ptrs) {  // null: an optional buffer not in use
    if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0) return false;
  }
  return true;
}

// Calls f(std::integral_constant<int, VPT>) for VPT = C / 128 in 1..MaxVpt (8 or 16).
template <int MaxVpt, class F>
void withVpt(int64_t C, F&& f) {
  const int64_t vpt = C / 128;
  if (vpt < 1 || vpt > MaxVpt) throw std::logic_error("rmsNorm: no fast path for this width");
  switch (vpt) {
#define DEPTHLAB_VPT(n) \
  case n: f(std::integral_constant<int, n>()); break;
    DEPTHLAB_VPT(1) DEPTHLAB_VPT(2) DEPTHLAB_VPT(3) DEPTHLAB_VPT(4) DEPTHLAB_VPT(5)
    DEPTHLAB_VPT(6) DEPTHLAB_VPT(7) DEPTHLAB_VPT(8)
#undef DEPTHLAB_VPT
    default:
      if constexpr (MaxVpt > 8) {
        switch (vpt) {
#define DEPTHLAB_VPT(n) \
  case n: f(std::integral_constant<int, n>()); break;
          DEPTHLAB_VPT(9) DEPTHLAB_VPT(10) DEPTHLAB_VPT(11) DEPTHLAB_VPT(12) DEPTHLAB_VPT(13)
          DEPTHLAB_VPT(14) DEPTHLAB_VPT(15) DEPTHLAB_VPT(16)
#undef DEPTHLAB_VPT
        }
      }
  }
}

}  // namespace

void rmsNormForward(const float* x, const float* w, DType yType, void* y, float* rstd, int64_t N,
                    int64_t C, float eps, float scale, Stream s) {
  addRmsNormForward(x, nullptr, nullptr, w, yType, y, rstd, N, C, eps, scale, s);
}

void addRmsNormForward(const float* x, const void* residual, float* sum, const float* w,
                       DType yType, void* y, float* rstd, int64_t N, int64_t C, float eps,
                       float scale, Stream s) {
  if (N == 0) return;
  const bool fast = fastPath(C, kMaxFastForward, {x, residual, sum, w, y});
  dispatch(yType, [&](auto* tag) {
    using TY = std::remove_pointer_t<decltype(tag)>;
    const TY* res = static_cast<const TY*>(residual);
    if (fast) {
      withVpt<kMaxFastForward / 128>(C, [&](auto vpt) {
        forwardWarp<TY, decltype(vpt)::value>
            <<<static_cast<unsigned>((N + kWarps - 1) / kWarps), kWarps * 32, 0, stream(s)>>>(
                x, res, sum, w, static_cast<TY*>(y), rstd, N, eps, scale);
      });
    } else {
      forwardGeneric<TY><<<gridFor(N, 1), kThreads, 0, stream(s)>>>(
          x, res, sum, w, static_cast<TY*>(y), rstd, N, C, eps, scale);
    }
  });
  check("rmsNormForward");
}

int64_t rmsNormPartialRows(int64_t N, int64_t C) {
  if (fastShape(C, kMaxFastBackward)) {
    return std::max<int64_t>(1, std::min(kMaxFastBlocks, (N + kWarps - 1) / kWarps));
  }
  const int64_t per = genericRowsPerBlock(N);
  return std::max<int64_t>(1, (N + per - 1) / per);
}

void rmsNormBackward(DType dyType, const void* dy, const float* x, const float* w,
                     const float* rstd, float* dx, float* dwPartial, int64_t N, int64_t C,
                     float scale, Stream s) {
  addRmsNormBackward(dyType, dy, x, w, rstd, nullptr, dx, nullptr, dwPartial, N, C, scale, s);
}

void addRmsNormBackward(DType dyType, const void* dy, const float* sum, const float* w,
                        const float* rstd, const float* dsum, float* dx, void* dresidual,
                        float* dwPartial, int64_t N, int64_t C, float scale, Stream s) {
  if (N == 0) return;
  const int64_t blocks = rmsNormPartialRows(N, C);
  // dwPartial's rows depend on the shape alone (rmsNormPartialRows), so the fast path cannot
  // fall back on alignment: the caller passes 16-byte aligned rows (fresh tensors).
  const bool fast = fastShape(C, kMaxFastBackward);
  if (fast && !fastPath(C, kMaxFastBackward, {dy, sum, w, dsum, dx, dresidual})) {
    throw std::invalid_argument("rmsNormBackward: rows not 16-byte aligned");
  }
  dispatch(dyType, [&](auto* tag) {
    using TDY = std::remove_pointer_t<decltype(tag)>;
    const TDY* g = static_cast<const TDY*>(dy);
    TDY* dres = static_cast<TDY*>(dresidual);
    if (fast) {
      withVpt<kMaxFastBackward / 128>(C, [&](auto vpt) {
        backwardWarp<TDY, decltype(vpt)::value>
            <<<static_cast<unsigned>(blocks), kWarps * 32, 0, stream(s)>>>(
                g, sum, w, rstd, dsum, dx, dres, dwPartial, N, scale);
      });
    } else {
      backwardGeneric<TDY><<<static_cast<unsigned>(blocks), kThreads, 0, stream(s)>>>(
          g, sum, w, rstd, dsum, dx, dres, dwPartial, N, C, scale, genericRowsPerBlock(N));
    }
  });
  check("rmsNormBackward");
}

}  // namespace depthlab::kernels::cuda

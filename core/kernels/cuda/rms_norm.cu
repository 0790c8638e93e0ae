// RMSNorm forward and backward on CUDA, float32, the LNS factor folded in; see cuda_kernels.h.
// One block per row (grid-stride); the weight gradient goes through fixed partial rows that the
// caller sums, so it needs no atomics and does not depend on scheduling.
#include "kernels/cuda/cuda_common.cuh"

namespace depthlab::kernels::cuda {

using namespace detail;

namespace {

constexpr int64_t kMaxPartials = 512;

__global__ void rmsNormForwardKernel(const float* __restrict__ x, const float* __restrict__ w,
                                     float* __restrict__ y, float* __restrict__ rstd, int64_t N,
                                     int64_t C, float eps, float scale) {
  __shared__ float shared[32];
  for (int64_t row = blockIdx.x; row < N; row += gridDim.x) {
    const float* xr = x + row * C;
    float* yr = y + row * C;
    float ss = 0.f;
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) ss += xr[c] * xr[c];
    ss = blockReduce(ss, shared, Sum(), 0.f);
    const float r = rsqrtf(ss / static_cast<float>(C) + eps);
    if (threadIdx.x == 0) rstd[row] = r;
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) yr[c] = w[c] * (xr[c] * r) * scale;
  }
}

// Block b handles rows [b * rowsPerBlock, ...) and owns row b of dwPartial.
// dx = scale * (g * r - x * r^3 * mean(g * x)), g = dy * w;  dw += scale * dy * x * r.
__global__ void rmsNormBackwardKernel(const float* __restrict__ dy, const float* __restrict__ x,
                                      const float* __restrict__ w, const float* __restrict__ rstd,
                                      float* __restrict__ dx, float* __restrict__ dwPartial,
                                      int64_t N, int64_t C, float scale, int64_t rowsPerBlock) {
  __shared__ float shared[32];
  float* part = dwPartial + blockIdx.x * C;
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) part[c] = 0.f;
  const int64_t begin = blockIdx.x * rowsPerBlock;
  const int64_t end = begin + rowsPerBlock < N ? begin + rowsPerBlock : N;
  for (int64_t row = begin; row < end; ++row) {
    const float* dyr = dy + row * C;
    const float* xr = x + row * C;
    float* dxr = dx + row * C;
    const float r = rstd[row];
    float dot = 0.f;
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) dot += dyr[c] * w[c] * xr[c];
    dot = blockReduce(dot, shared, Sum(), 0.f);
    const float k = r * r * r * dot / static_cast<float>(C);
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
      dxr[c] = scale * (dyr[c] * w[c] * r - xr[c] * k);
      part[c] += scale * dyr[c] * xr[c] * r;  // this thread alone owns column c of `part`
    }
  }
}

int64_t rowsPerBlock(int64_t N) { return std::max<int64_t>(1, (N + kMaxPartials - 1) / kMaxPartials); }

}  // namespace

void rmsNormForward(const float* x, const float* w, float* y, float* rstd, int64_t N, int64_t C,
                    float eps, float scale, Stream s) {
  if (N == 0) return;
  rmsNormForwardKernel<<<gridFor(N, 1), kThreads, 0, stream(s)>>>(x, w, y, rstd, N, C, eps, scale);
  check("rmsNormForward");
}

int64_t rmsNormPartialRows(int64_t N) {
  const int64_t per = rowsPerBlock(N);
  return std::max<int64_t>(1, (N + per - 1) / per);
}

void rmsNormBackward(const float* dy, const float* x, const float* w, const float* rstd, float* dx,
                     float* dwPartial, int64_t N, int64_t C, float scale, Stream s) {
  const int64_t blocks = rmsNormPartialRows(N);
  rmsNormBackwardKernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream(s)>>>(
      dy, x, w, rstd, dx, dwPartial, N, C, scale, rowsPerBlock(N));
  check("rmsNormBackward");
}

}  // namespace depthlab::kernels::cuda

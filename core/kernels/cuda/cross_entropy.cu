// Cross-entropy over the vocabulary on CUDA, straight from the logits' own type (bf16 under
// autocast): per-row log-sum-exp in float32, no float32 copy of the (N, V) logits and no saved
// log-softmax; the backward recomputes softmax from the logits and the saved log-sum-exp and
// writes the gradient in the logits' type. Targets of -100 (pads) get loss 0 and no gradient.
// See cuda_kernels.h.
#include <cmath>

#include "kernels/cuda/cuda_common.cuh"

namespace depthlab::kernels::cuda {

using namespace detail;

namespace {

constexpr int64_t kIgnoreTarget = -100;  // data::kIgnoreTarget: a pad's target, no loss

template <class T>
__global__ void crossEntropyForwardKernel(const T* __restrict__ logits,
                                          const int64_t* __restrict__ targets,
                                          float* __restrict__ loss, float* __restrict__ lse,
                                          int64_t N, int64_t V) {
  __shared__ float shared[32];
  for (int64_t row = blockIdx.x; row < N; row += gridDim.x) {
    const T* lr = logits + row * V;
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < V; j += blockDim.x) m = fmaxf(m, toFloat(lr[j]));
    m = blockReduce(m, shared, Max(), -INFINITY);
    float s = 0.f;
    for (int64_t j = threadIdx.x; j < V; j += blockDim.x) s += expf(toFloat(lr[j]) - m);
    s = blockReduce(s, shared, Sum(), 0.f);
    if (threadIdx.x == 0) {
      const float l = m + logf(s);
      const int64_t t = targets[row];
      lse[row] = l;
      loss[row] = t == kIgnoreTarget ? 0.f : (t >= 0 && t < V) ? l - toFloat(lr[t]) : NAN;
    }
  }
}

template <class T>
__global__ void crossEntropyBackwardKernel(const T* __restrict__ logits,
                                           const int64_t* __restrict__ targets,
                                           const float* __restrict__ lse,
                                           const float* __restrict__ gradScale, float rowScale,
                                           T* __restrict__ dlogits, int64_t N, int64_t V) {
  const float g = *gradScale * rowScale;
  for (int64_t row = blockIdx.x; row < N; row += gridDim.x) {
    const T* lr = logits + row * V;
    T* dr = dlogits + row * V;
    const float l = lse[row];
    const int64_t t = targets[row];
    if (t == kIgnoreTarget) {  // a pad's row: no gradient
      for (int64_t j = threadIdx.x; j < V; j += blockDim.x) dr[j] = fromFloat<T>(0.f);
      continue;
    }
    for (int64_t j = threadIdx.x; j < V; j += blockDim.x) {
      const float p = expf(toFloat(lr[j]) - l);
      dr[j] = fromFloat<T>((p - (j == t ? 1.f : 0.f)) * g);
    }
  }
}

}  // namespace

void crossEntropyForward(DType t, const void* logits, const int64_t* targets, float* loss,
                         float* lse, int64_t N, int64_t V, Stream s) {
  if (N == 0) return;
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    crossEntropyForwardKernel<T><<<gridFor(N, 1), kThreads, 0, stream(s)>>>(
        static_cast<const T*>(logits), targets, loss, lse, N, V);
  });
  check("crossEntropyForward");
}

void crossEntropyBackward(DType t, const void* logits, const int64_t* targets, const float* lse,
                          const float* gradScale, float rowScale, void* dlogits, int64_t N,
                          int64_t V, Stream s) {
  if (N == 0) return;
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    crossEntropyBackwardKernel<T><<<gridFor(N, 1), kThreads, 0, stream(s)>>>(
        static_cast<const T*>(logits), targets, lse, gradScale, rowScale, static_cast<T*>(dlogits),
        N, V);
  });
  check("crossEntropyBackward");
}

}  // namespace depthlab::kernels::cuda

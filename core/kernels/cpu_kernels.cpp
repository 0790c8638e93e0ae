// See cpu_kernels.h. Row reductions accumulate in double with `omp simd` (no -ffast-math
// needed for them to vectorise); elementwise parts stay in the tensor's type.
#include "kernels/cpu_kernels.h"

#include "kernels/fast_exp.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

namespace depthlab::kernels {

namespace {
std::atomic<bool> g_enabled{true};
}  // namespace

void setFusedKernelsEnabled(bool enabled) { g_enabled = enabled; }
bool fusedKernelsEnabled() { return g_enabled; }

// The arithmetic kernels are compiled for AVX-512 and AVX2 as well, the widest the CPU has
// picked at load time: at baseline x86-64's four SSE lanes, Adam's divide and square root and
// RMSNorm's double reductions were compute-bound. The wide clones may contract a multiply and
// an add into one FMA (one rounding instead of two) and sum a row in another lane order, so
// their results can differ from the baseline build's in the last bit.
#define DEPTHLAB_WIDE_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))

template <typename T>
DEPTHLAB_WIDE_CLONES void rmsNormForward(const T* x, const T* w, T* y, T* rstd, int64_t begin,
                                         int64_t end, int64_t C, double eps, double scale) {
  const T s = static_cast<T>(scale);
  for (int64_t i = begin; i < end; ++i) {
    const T* xr = x + i * C;
    T* yr = y + i * C;
    double ss = 0;
#pragma omp simd reduction(+ : ss)
    for (int64_t j = 0; j < C; ++j) ss += static_cast<double>(xr[j]) * static_cast<double>(xr[j]);
    const T r = static_cast<T>(1.0 / std::sqrt(ss / static_cast<double>(C) + eps));
    rstd[i] = r;
    // Same rounding order as the composite w * (x * r), then * scale (exact when scale is 1).
#pragma omp simd
    for (int64_t j = 0; j < C; ++j) yr[j] = w[j] * (xr[j] * r) * s;
  }
}

template <typename T>
DEPTHLAB_WIDE_CLONES void addRows(const T* a, const T* b, T* out, int64_t begin, int64_t end,
                                  int64_t C) {
#pragma omp simd
  for (int64_t i = begin * C; i < end * C; ++i) out[i] = a[i] + b[i];
}

template <typename T>
DEPTHLAB_WIDE_CLONES void rmsNormBackward(const T* dy, const T* x, const T* w, const T* rstd, T* dx,
                                          double* dwPartial, int64_t begin, int64_t end, int64_t C,
                                          double scale) {
  // y_j = s w_j x_j r with r = (mean(x^2) + eps)^-1/2, so with g_j = dy_j s w_j:
  // dx_j = r g_j - x_j r^3 (sum_k g_k x_k) / C, and dw_j = sum over rows of dy_j s x_j r.
  for (int64_t i = begin; i < end; ++i) {
    const T* dyr = dy + i * C;
    const T* xr = x + i * C;
    T* dxr = dx + i * C;
    const double r = static_cast<double>(rstd[i]);
    double dot = 0;
#pragma omp simd reduction(+ : dot)
    for (int64_t j = 0; j < C; ++j) {
      dot += static_cast<double>(dyr[j] * w[j]) * static_cast<double>(xr[j]);
    }
    const T c = static_cast<T>(dot * scale * r * r * r / static_cast<double>(C));
    const T rs = static_cast<T>(r * scale);
#pragma omp simd
    for (int64_t j = 0; j < C; ++j) dxr[j] = dyr[j] * w[j] * rs - xr[j] * c;
    const double rsd = r * scale;
#pragma omp simd
    for (int64_t j = 0; j < C; ++j) {
      dwPartial[j] += static_cast<double>(dyr[j] * xr[j]) * rsd;
    }
  }
}

template <typename T>
DEPTHLAB_WIDE_CLONES void ropeSplitHeadsForward(const T* x, const T* cos, const T* sin, T* y,
                                                int64_t begin, int64_t end, int64_t Tlen, int64_t H,
                                                int64_t D, int64_t xRowStride) {
  const int64_t half = D / 2;
  for (int64_t row = begin; row < end; ++row) {  // row = b * T + t
    const int64_t b = row / Tlen, t = row % Tlen;
    const T* c = cos + t * D;
    const T* s = sin + t * D;
    for (int64_t h = 0; h < H; ++h) {
      const T* xr = x + row * xRowStride + h * D;
      T* yr = y + ((b * H + h) * Tlen + t) * D;
      // y = x * cos + rotate_half(x) * sin, rotate_half(x) = (-x2, x1)
#pragma omp simd
      for (int64_t j = 0; j < half; ++j) yr[j] = xr[j] * c[j] - xr[j + half] * s[j];
#pragma omp simd
      for (int64_t j = half; j < D; ++j) yr[j] = xr[j] * c[j] + xr[j - half] * s[j];
    }
  }
}

template <typename T>
DEPTHLAB_WIDE_CLONES void ropeSplitHeadsBackward(const T* dy, const T* cos, const T* sin, T* dx,
                                                 int64_t begin, int64_t end, int64_t Tlen,
                                                 int64_t H, int64_t D, int64_t dxRowStride) {
  const int64_t half = D / 2;
  for (int64_t row = begin; row < end; ++row) {
    const int64_t b = row / Tlen, t = row % Tlen;
    const T* c = cos + t * D;
    const T* s = sin + t * D;
    for (int64_t h = 0; h < H; ++h) {
      const T* dyr = dy + ((b * H + h) * Tlen + t) * D;
      T* dxr = dx + row * dxRowStride + h * D;
#pragma omp simd
      for (int64_t j = 0; j < half; ++j) dxr[j] = dyr[j] * c[j] + dyr[j + half] * s[j + half];
#pragma omp simd
      for (int64_t j = half; j < D; ++j) dxr[j] = dyr[j] * c[j] - dyr[j - half] * s[j - half];
    }
  }
}

template <typename T>
void splitHeads(const T* x, T* y, int64_t begin, int64_t end, int64_t Tlen, int64_t H, int64_t D,
                int64_t xRowStride) {
  for (int64_t row = begin; row < end; ++row) {
    const int64_t b = row / Tlen, t = row % Tlen;
    for (int64_t h = 0; h < H; ++h) {
      std::memcpy(y + ((b * H + h) * Tlen + t) * D, x + row * xRowStride + h * D, D * sizeof(T));
    }
  }
}

template <typename T>
void mergeHeads(const T* dy, T* dx, int64_t begin, int64_t end, int64_t Tlen, int64_t H,
                int64_t D, int64_t dxRowStride) {
  for (int64_t row = begin; row < end; ++row) {
    const int64_t b = row / Tlen, t = row % Tlen;
    for (int64_t h = 0; h < H; ++h) {
      std::memcpy(dx + row * dxRowStride + h * D, dy + ((b * H + h) * Tlen + t) * D, D * sizeof(T));
    }
  }
}


namespace {

template <typename T, typename Exp>
__attribute__((always_inline)) inline void swigluForwardRows(const T* gu, T* h, int64_t begin,
                                                             int64_t end, int64_t F, Exp expOf) {
  for (int64_t i = begin; i < end; ++i) {
    const T* g = gu + i * 2 * F;
    const T* u = g + F;
    T* hr = h + i * F;
#pragma omp simd
    for (int64_t j = 0; j < F; ++j) hr[j] = g[j] / (T(1) + expOf(-g[j])) * u[j];
  }
}

template <typename T, typename Exp>
__attribute__((always_inline)) inline void swigluBackwardRows(const T* dh, const T* gu, T* dgu,
                                                              int64_t begin, int64_t end,
                                                              int64_t F, Exp expOf) {
  for (int64_t i = begin; i < end; ++i) {
    const T* g = gu + i * 2 * F;
    const T* u = g + F;
    const T* dhr = dh + i * F;
    T* dg = dgu + i * 2 * F;
    T* du = dg + F;
#pragma omp simd
    for (int64_t j = 0; j < F; ++j) {
      const T s = T(1) / (T(1) + expOf(-g[j]));
      const T gs = g[j] * s;
      du[j] = dhr[j] * gs;
      dg[j] = dhr[j] * u[j] * (s + gs * (T(1) - s));
    }
  }
}

}  // namespace

// The float loops are compiled for AVX-512 and AVX2 as well (picked at load time), so the
// polynomial exp runs 16 or 8 lanes wide where the CPU has them; double (gradient checks)
// uses libm's exp.
DEPTHLAB_WIDE_CLONES
void swigluForward(const float* gu, float* h, int64_t begin, int64_t end, int64_t F) {
  swigluForwardRows(gu, h, begin, end, F, [](float x) { return expFloat(x); });
}

void swigluForward(const double* gu, double* h, int64_t begin, int64_t end, int64_t F) {
  swigluForwardRows(gu, h, begin, end, F, [](double x) { return std::exp(x); });
}

DEPTHLAB_WIDE_CLONES
void swigluBackward(const float* dh, const float* gu, float* dgu, int64_t begin, int64_t end,
                    int64_t F) {
  swigluBackwardRows(dh, gu, dgu, begin, end, F, [](float x) { return expFloat(x); });
}

void swigluBackward(const double* dh, const double* gu, double* dgu, int64_t begin, int64_t end,
                    int64_t F) {
  swigluBackwardRows(dh, gu, dgu, begin, end, F, [](double x) { return std::exp(x); });
}

DEPTHLAB_WIDE_CLONES
void adamUpdate(float* p, const float* g, float* m, float* v, int64_t begin, int64_t end,
                const AdamStepConstants& k) {
  // Locals: the stores through p, m and v could alias k, which would reload it every element.
  const float negStep = -k.stepSize, decay = k.decoupledDecay, wd = k.weightDecay;
  const float b1 = k.beta1, c1 = k.oneMinusBeta1, b2 = k.beta2, c2 = k.oneMinusBeta2;
  const float bc2 = k.biasCorrection2Sqrt, eps = k.eps;
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) {
    const float pi = p[i] * decay;
    const float gi = g[i] + wd * pi;
    const float mi = m[i] * b1 + c1 * gi;
    const float vi = v[i] * b2 + c2 * gi * gi;
    const float denom = std::sqrt(vi) / bc2 + eps;
    m[i] = mi;
    v[i] = vi;
    p[i] = pi + negStep * (mi / denom);
  }
}

#define DEPTHLAB_INSTANTIATE(T)                                                                 \
  template void addRows<T>(const T*, const T*, T*, int64_t, int64_t, int64_t);                  \
  template void rmsNormForward<T>(const T*, const T*, T*, T*, int64_t, int64_t, int64_t, double, \
                                  double);                                                      \
  template void rmsNormBackward<T>(const T*, const T*, const T*, const T*, T*, double*, int64_t, \
                                   int64_t, int64_t, double);                                   \
  template void ropeSplitHeadsForward<T>(const T*, const T*, const T*, T*, int64_t, int64_t,    \
                                         int64_t, int64_t, int64_t, int64_t);                   \
  template void ropeSplitHeadsBackward<T>(const T*, const T*, const T*, T*, int64_t, int64_t,   \
                                          int64_t, int64_t, int64_t, int64_t);                  \
  template void splitHeads<T>(const T*, T*, int64_t, int64_t, int64_t, int64_t, int64_t,        \
                              int64_t);                                                         \
  template void mergeHeads<T>(const T*, T*, int64_t, int64_t, int64_t, int64_t, int64_t,        \
                              int64_t);
DEPTHLAB_INSTANTIATE(float)
DEPTHLAB_INSTANTIATE(double)
#undef DEPTHLAB_INSTANTIATE

}  // namespace depthlab::kernels

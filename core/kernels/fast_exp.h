// exp for float written so `omp simd` loops vectorise it (no libm call, no branch). Internal
// to the kernel sources (compiled -O3 -fno-math-errno -fopenmp-simd); not a public API.
#pragma once

#include <cstdint>
#include <cstring>

namespace depthlab::kernels {

// exp(x) for float in a form `omp simd` vectorises (no libm call, no branch): Cephes' expf,
// range reduced by n = round(x log2 e) (the 1.5 * 2^23 shifter rounds in the float's low bits),
// a degree-6 polynomial on |r| <= ln2/2, times 2^n built from its bits. Within 1.4 ulp of
// exp on the clamped range [-87.3, 87]: the bounds keep 2^n and 1 / (1 + exp(x)) normal
// floats (users: sigmoid in SwiGLU, the causal softmax).
// Always inlined: a caller compiled with its own target or optimize attributes (the
// target_clones of SwiGLU and the softmax) would otherwise call it out of line, one scalar call
// per element, and the loop would not vectorise (measured once: 10% of a cpu-demo step).
// F is float, or a GCC vector of floats with I the int32 vector of the same width (the
// attention's softmax runs it on 16 lanes at a time, attention_kernels.cpp).
template <typename F, typename I>
__attribute__((always_inline)) inline F expFloatLanes(F x) {
  const F lo = F{} - 87.3f, hi = F{} + 87.0f;
  x = x < lo ? lo : x;
  x = x > hi ? hi : x;
  constexpr float kShifter = 12582912.0f;  // 1.5 * 2^23
  const F t = x * 1.44269504088896341f + kShifter;
  const F nf = t - kShifter;  // round(x log2 e)
  I tBits;
  std::memcpy(&tBits, &t, sizeof tBits);
  const I n = tBits - 0x4B400000;  // the same integer, from t's low bits
  const F r = (x - nf * 0.693359375f) + nf * 2.12194440e-4f;  // x - n ln2 in two parts
  F p = F{} + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  const I bits = (n + 127) << 23;
  F scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

__attribute__((always_inline)) inline float expFloat(float x) {
  return expFloatLanes<float, int32_t>(x);
}

}  // namespace depthlab::kernels

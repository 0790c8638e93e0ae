// OpenBLAS's kernel choice on CPUs newer than the OpenBLAS. Debian's OpenBLAS (0.3.21, built
// with DYNAMIC_ARCH) picks its kernels from the CPU model when it loads; a model it does not
// know (Intel Emerald Rapids, family 6 model 207, measured here) gets its Prescott (SSE3)
// kernels: a 1024 x 256 x 768 sgemm ran at 28 GFLOP/s on one core instead of ~95 with the
// SkylakeX (AVX-512) ones, and `cpu-demo` trained 2.4x slower. OpenBLAS reads
// OPENBLAS_CORETYPE only when it loads, so the cure is to set it and start the program again.
// This file decides and does that; it does not touch any other BLAS (pip's torch uses MKL:
// no OpenBLAS symbol, nothing happens) and never overrides a core the user chose.
#pragma once

#include <string>

namespace depthlab::util {

/// The vector extensions OpenBLAS's x86 kernels are chosen by (CPU and OS support both).
struct CpuVectorFeatures {
  bool avx2 = false, fma = false;
  bool avx512 = false;  // F, BW, VL, DQ and CD: what OpenBLAS's SkylakeX kernels use
};
CpuVectorFeatures cpuVectorFeatures();

/// The OPENBLAS_CORETYPE that serves this CPU when OpenBLAS picked `picked` (its
/// openblas_get_corename(), any case), or "" when `picked` is already as good: only a fallback
/// core from before AVX2 (Prescott, Core2, Nehalem, Sandybridge, ...) on a CPU with AVX2 + FMA
/// is replaced, by "SkylakeX" with AVX-512, else "Haswell".
std::string betterOpenBlasCore(const std::string& picked, const CpuVectorFeatures& cpu);

/// The kernels the loaded OpenBLAS uses, lower case ("skylakex"), or "" when this process has
/// no OpenBLAS.
std::string openBlasCore();

/// First thing in main(), before any thread is started: when OpenBLAS runs fallback kernels
/// on a CPU that has better ones and OPENBLAS_CORETYPE is unset, sets it and re-executes this
/// program with the same arguments (so the child processes it starts, the Python references
/// included, inherit the same choice). Returns when nothing had to change, or when the
/// re-execution failed (the variable is then removed again).
void ensureOpenBlasKernels(char** argv);

}  // namespace depthlab::util

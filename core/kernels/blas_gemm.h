// Row-major GEMM straight through the Fortran BLAS interface (`sgemm_` / `dgemm_`): OpenBLAS
// in Debian's build, the MKL inside PyTorch's own libtorch_cpu in the torch2 configuration.
// For the many small per-(batch, head) products of the CPU causal attention, where ATen's
// bmm spends as long per slice on tensor bookkeeping as the GEMM itself takes. Raw pointers
// only: no torch; threads are the BLAS library's own (one inside a parallel region).
#pragma once

#include <cstdint>

namespace depthlab::kernels {

/// C (m x n, row-major, ldc) = alpha * op(A) op(B) + beta * C, where op(A) is m x k and op(B)
/// is k x n. A is stored row-major as m x k (transA false, lda >= k) or as k x m (transA true,
/// lda >= m); B likewise as k x n or n x k. Sizes must fit the BLAS's 32-bit integers.
void gemmRowMajor(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
                  const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                  int64_t ldc);
void gemmRowMajor(bool transA, bool transB, int64_t m, int64_t n, int64_t k, double alpha,
                  const double* a, int64_t lda, const double* b, int64_t ldb, double beta,
                  double* c, int64_t ldc);

}  // namespace depthlab::kernels

// See blas_gemm.h. A row-major C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T, so the
// operands go to the BLAS swapped, each with its own transpose flag.
#include "kernels/blas_gemm.h"

extern "C" {
void sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
            const float* beta, float* c, const int* ldc);
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const double* alpha, const double* a, const int* lda, const double* b, const int* ldb,
            const double* beta, double* c, const int* ldc);
}

namespace depthlab::kernels {

namespace {

template <typename T, typename Gemm>
void rowMajor(Gemm gemm, bool transA, bool transB, int64_t m, int64_t n, int64_t k, T alpha,
              const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  const char ta = transB ? 'T' : 'N', tb = transA ? 'T' : 'N';
  const int mi = static_cast<int>(n), ni = static_cast<int>(m), ki = static_cast<int>(k);
  const int la = static_cast<int>(ldb), lb = static_cast<int>(lda), lc = static_cast<int>(ldc);
  gemm(&ta, &tb, &mi, &ni, &ki, &alpha, b, &la, a, &lb, &beta, c, &lc);
}

}  // namespace

void gemmRowMajor(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
                  const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                  int64_t ldc) {
  rowMajor(sgemm_, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemmRowMajor(bool transA, bool transB, int64_t m, int64_t n, int64_t k, double alpha,
                  const double* a, int64_t lda, const double* b, int64_t ldb, double beta,
                  double* c, int64_t ldc) {
  rowMajor(dgemm_, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace depthlab::kernels

// kernels::gemmRowMajor against torch::mm on the same views: every transpose pair, leading
// dimensions wider than the matrices (the padding left untouched), alpha and beta, float and
// double, sizes from 1 x 1 to past the BLAS's small-matrix path.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <limits>
#include <string>

#include "kernels/blas_gemm.h"

using namespace depthlab;

namespace {

// A (rows x cols) matrix stored row-major `pad` elements wider than it is: (view, buffer).
std::pair<torch::Tensor, torch::Tensor> padded(int64_t rows, int64_t cols, int64_t pad,
                                               torch::ScalarType dtype) {
  auto buffer = torch::randn({rows, cols + pad}, torch::TensorOptions().dtype(dtype));
  return {buffer.slice(1, 0, cols), buffer};
}

template <typename T>
void checkAll(torch::ScalarType dtype, double tolerance) {
  struct Size {
    int64_t m, n, k;
  };
  for (const Size s : {Size{1, 1, 1}, Size{5, 7, 3}, Size{64, 130, 64}, Size{97, 33, 200}}) {
    for (const bool ta : {false, true}) {
      for (const bool tb : {false, true}) {
        SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
                     (ta ? " A^T" : " A") + (tb ? " B^T" : " B"));
        // A stored as m x k (or k x m when transposed); B as k x n (or n x k).
        auto [a, aBuf] = ta ? padded(s.k, s.m, 3, dtype) : padded(s.m, s.k, 3, dtype);
        auto [b, bBuf] = tb ? padded(s.n, s.k, 5, dtype) : padded(s.k, s.n, 5, dtype);
        auto [c, cBuf] = padded(s.m, s.n, 2, dtype);
        const auto before = cBuf.clone();
        const T alpha = T(0.5), beta = T(2);
        auto expected = alpha * torch::mm(ta ? a.t() : a, tb ? b.t() : b) + beta * c;
        kernels::gemmRowMajor(ta, tb, s.m, s.n, s.k, alpha, a.template data_ptr<T>(), a.stride(0),
                              b.template data_ptr<T>(), b.stride(0), beta, c.template data_ptr<T>(),
                              c.stride(0));
        EXPECT_TRUE(torch::allclose(c, expected, tolerance, tolerance))
            << "max difference " << (c - expected).abs().max().template item<double>();
        EXPECT_TRUE(torch::equal(cBuf.slice(1, s.n), before.slice(1, s.n))) << "padding written";
        // beta 0 ignores what C held, NaN included (the attention writes into fresh buffers).
        c.fill_(std::numeric_limits<T>::quiet_NaN());
        kernels::gemmRowMajor(ta, tb, s.m, s.n, s.k, T(1), a.template data_ptr<T>(), a.stride(0),
                              b.template data_ptr<T>(), b.stride(0), T(0), c.template data_ptr<T>(),
                              c.stride(0));
        EXPECT_TRUE(
            torch::allclose(c, torch::mm(ta ? a.t() : a, tb ? b.t() : b), tolerance, tolerance));
      }
    }
  }
}

}  // namespace

TEST(BlasGemm, RowMajorProductsMatchTorchMmForEveryTransposePair) {
  checkAll<float>(torch::kFloat32, 1e-4);
  checkAll<double>(torch::kFloat64, 1e-12);
}

// See causal_attention.h. The block GEMMs write into strided views of one (B, H, T, T) buffer
// and of the (B, T, H, D) output, one BLAS call per (batch, head) slice (kernels/blas_gemm.h).
// The GEMMs and the softmax loops split the B x H slices across ATen's intra-op threads, each
// slice computed alone, so results do not depend on the thread count.
#include "model/causal_attention.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <limits>
#include <optional>

#include "kernels/attention_kernels.h"
#include "kernels/blas_gemm.h"
#include "model/cpu_parallel.h"

namespace depthlab::model {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Query rows per block (and key columns in backward). Smaller blocks skip more of the masked
// triangle but make more, smaller GEMMs; one thread of a Zen 4 core, forward + backward of 64
// slices with D = 64 (ms): T = 64: 2.87 / 2.48 / 2.29 with 64 / 32 / 16 rows; T = 128: 10.1 /
// 9.6 / 9.9; T = 256: 35.7 / 29.9 / 31.7; T = 512 (32 slices): 96 / 95 / 94.
int64_t blockRowsFor(int64_t T) { return T <= 64 ? 16 : 32; }

template <typename F>
void forEachSlice(int64_t n, int64_t elementsPerSlice, const F& f) {
  at::parallel_for(0, n, grainFor(elementsPerSlice), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) f(i);
  });
}

// One operand of a batched product as the BLAS sees it: each (r, c) slice stored row-major
// (rows `ld` apart) or as the transpose of a row-major (c, r) matrix.
struct BlasOperand {
  bool transposed = false;
  int64_t ld = 0;
};

// How `x` (B, H, r, c) is laid out per (b, h) slice, if the BLAS can take it as it is.
std::optional<BlasOperand> blasOperand(const torch::Tensor& x) {
  const int64_t r = x.size(2), c = x.size(3);
  if (x.stride(3) == 1 && x.stride(2) >= std::max<int64_t>(1, c))
    return BlasOperand{false, x.stride(2)};
  if (x.stride(2) == 1 && x.stride(3) >= std::max<int64_t>(1, r))
    return BlasOperand{true, x.stride(3)};
  return std::nullopt;
}

// Where slice i = b * H + h of `x` (B, H, ...) starts, in elements from its data pointer.
int64_t sliceOffset(const torch::Tensor& x, int64_t i) {
  const int64_t H = x.size(1);
  return (i / H) * x.stride(0) + (i % H) * x.stride(1);
}

// out (B, H, m, n), a strided view into a larger buffer, = a (B, H, m, k) @ b (B, H, k, n), in
// place. Each slice is one BLAS call (ATen's bmm spent as long on per-slice bookkeeping as on
// these small products); the slices split across ATen's intra-op threads, each computed alone.
void bmmInto(torch::Tensor out, const torch::Tensor& a, const torch::Tensor& b) {
  const auto oa = blasOperand(a), ob = blasOperand(b), oc = blasOperand(out);
  const auto fitsBlasInt = [](int64_t v) { return v <= std::numeric_limits<int>::max(); };
  const int64_t N = out.size(0) * out.size(1), m = out.size(2), n = out.size(3), k = a.size(3);
  const bool blas = (out.scalar_type() == torch::kFloat || out.scalar_type() == torch::kDouble) &&
                    oa && ob && oc && !oc->transposed && N > 0 &&
                    fitsBlasInt(std::max({oa->ld, ob->ld, oc->ld, m, n, k}));
  if (!blas) {
    out.copy_(torch::matmul(a, b));
    return;
  }
  AT_DISPATCH_FLOATING_TYPES(out.scalar_type(), "depthlab_attention_gemm", [&] {
    const scalar_t* ap = a.data_ptr<scalar_t>();
    const scalar_t* bp = b.data_ptr<scalar_t>();
    scalar_t* cp = out.data_ptr<scalar_t>();
    forEachSlice(N, m * n * k, [&](int64_t i) {
      kernels::gemmRowMajor(oa->transposed, ob->transposed, m, n, k, scalar_t(1),
                            ap + sliceOffset(a, i), oa->ld, bp + sliceOffset(b, i), ob->ld,
                            scalar_t(0), cp + sliceOffset(out, i), oc->ld);
    });
  });
}

// Heads in, rows out: q, k, v (B, H, T, D) -> y (B, T, H * D), the layout the output
// projection multiplies, written there by the GEMMs themselves (no transposed copy forward,
// none of the gradient backward). Time is dimension 2 of every (B, H, T, .) operand.
struct CausalAttentionFunction : public torch::autograd::Function<CausalAttentionFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& qIn,
                               const torch::Tensor& kIn, const torch::Tensor& vIn, double scale) {
    auto q = qIn.contiguous(), k = kIn.contiguous(), v = vIn.contiguous();  // (B, H, T, D)
    const int64_t B = q.size(0), H = q.size(1), T = q.size(2), D = q.size(3);
    const int64_t N = B * H, blockRows = blockRowsFor(T);
    auto p = torch::empty({B, H, T, T}, q.options());  // (B, H, T, T); row i valid in [0, i]
    auto y = torch::empty({B, T, H, D}, q.options());  // (B, T, H, D)
    auto yHeads = y.permute({0, 2, 1, 3});             // (B, H, T, D) view of y
    for (int64_t r0 = 0; r0 < T; r0 += blockRows) {
      const int64_t r1 = std::min(T, r0 + blockRows);
      auto scores = p.slice(2, r0, r1).slice(3, 0, r1);  // (B, H, r1 - r0, r1)
      bmmInto(scores, q.slice(2, r0, r1), k.slice(2, 0, r1).transpose(2, 3));
      AT_DISPATCH_FLOATING_TYPES(p.scalar_type(), "depthlab_causal_softmax", [&] {
        scalar_t* pp = p.data_ptr<scalar_t>();
        forEachSlice(N, (r1 - r0) * r1, [&](int64_t n) {
          kernels::causalSoftmaxForward(pp + n * T * T + r0 * T, r0, r1 - r0, r1, T,
                                        static_cast<scalar_t>(scale));
        });
      });
      bmmInto(yHeads.slice(2, r0, r1), scores, v.slice(2, 0, r1));
    }
    ctx->save_for_backward({q, k, v, p});
    ctx->saved_data["scale"] = scale;
    return y.view({B, T, H * D});
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &q = saved[0], &k = saved[1], &v = saved[2], &p = saved[3];
    const double scale = ctx->saved_data["scale"].toDouble();
    const int64_t B = q.size(0), H = q.size(1), T = q.size(2), D = q.size(3);
    const int64_t N = B * H, blockRows = blockRowsFor(T);
    // (B, T, H * D) as it comes from the output projection -> a (B, H, T, D) view of it
    auto dy = grads[0].contiguous().view({B, T, H, D}).permute({0, 2, 1, 3});
    auto ds = torch::empty({B, H, T, T}, q.options());  // gradient of the scaled scores
    auto dq = torch::empty({B, H, T, D}, q.options());
    auto dk = torch::empty({B, H, T, D}, q.options());
    auto dv = torch::empty({B, H, T, D}, q.options());
    for (int64_t r0 = 0; r0 < T; r0 += blockRows) {  // query rows: dp, ds, dq
      const int64_t r1 = std::min(T, r0 + blockRows);
      auto block = ds.slice(2, r0, r1).slice(3, 0, r1);                        // (B, H, r1 - r0, r1)
      bmmInto(block, dy.slice(2, r0, r1), v.slice(2, 0, r1).transpose(2, 3));  // dp
      AT_DISPATCH_FLOATING_TYPES(p.scalar_type(), "depthlab_causal_softmax_backward", [&] {
        const scalar_t* pp = p.data_ptr<scalar_t>();
        scalar_t* dsp = ds.data_ptr<scalar_t>();
        forEachSlice(N, (r1 - r0) * r1, [&](int64_t n) {
          const int64_t at = n * T * T + r0 * T;
          kernels::causalSoftmaxBackward(pp + at, dsp + at, r0, r1 - r0, r1, T,
                                         static_cast<scalar_t>(scale));
        });
      });
      bmmInto(dq.slice(2, r0, r1), block, k.slice(2, 0, r1));
    }
    for (int64_t c0 = 0; c0 < T; c0 += blockRows) {  // key columns: rows c0.. see them
      const int64_t c1 = std::min(T, c0 + blockRows);
      bmmInto(dv.slice(2, c0, c1), p.slice(2, c0, T).slice(3, c0, c1).transpose(2, 3),
              dy.slice(2, c0, T));
      bmmInto(dk.slice(2, c0, c1), ds.slice(2, c0, T).slice(3, c0, c1).transpose(2, 3),
              q.slice(2, c0, T));
    }
    return {dq, dk, dv, torch::Tensor()};
  }
};

}  // namespace

torch::Tensor fusedCausalAttention(const torch::Tensor& q, const torch::Tensor& k,
                                   const torch::Tensor& v, double scale) {
  return CausalAttentionFunction::apply(q, k, v, scale);
}

}  // namespace depthlab::model

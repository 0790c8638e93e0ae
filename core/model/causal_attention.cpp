// See causal_attention.h. The block GEMMs write into strided views of one (N, T, T) buffer,
// one BLAS call per (batch, head) slice (kernels/blas_gemm.h). The GEMMs and the softmax loops
// split the N slices across ATen's intra-op threads, each slice computed alone, so results do
// not depend on the thread count.
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

constexpr int64_t kBlockRows = 64;  // query rows per block (and key columns in backward)

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

// How `x` (N, r, c) is laid out per slice, if the BLAS can take it as it is.
std::optional<BlasOperand> blasOperand(const torch::Tensor& x) {
  const int64_t r = x.size(1), c = x.size(2);
  if (x.stride(2) == 1 && x.stride(1) >= std::max<int64_t>(1, c))
    return BlasOperand{false, x.stride(1)};
  if (x.stride(1) == 1 && x.stride(2) >= std::max<int64_t>(1, r))
    return BlasOperand{true, x.stride(2)};
  return std::nullopt;
}

// out (N, m, n), a strided view into a larger buffer, = a (N, m, k) @ b (N, k, n), in place.
// Each slice is one BLAS call (ATen's bmm spent as long on per-slice bookkeeping as on these
// small products); the slices split across ATen's intra-op threads, each computed alone.
void bmmInto(torch::Tensor out, const torch::Tensor& a, const torch::Tensor& b) {
  const auto oa = blasOperand(a), ob = blasOperand(b), oc = blasOperand(out);
  const auto fitsBlasInt = [](int64_t v) { return v <= std::numeric_limits<int>::max(); };
  const bool blas =
      (out.scalar_type() == torch::kFloat || out.scalar_type() == torch::kDouble) && oa && ob &&
      oc && !oc->transposed && out.size(0) > 0 &&
      fitsBlasInt(std::max({oa->ld, ob->ld, oc->ld, a.size(1), a.size(2), b.size(2)}));
  if (!blas) {
    at::bmm_out(out, a, b);
    return;
  }
  const int64_t N = out.size(0), m = out.size(1), n = out.size(2), k = a.size(2);
  AT_DISPATCH_FLOATING_TYPES(out.scalar_type(), "depthlab_attention_gemm", [&] {
    const scalar_t* ap = a.data_ptr<scalar_t>();
    const scalar_t* bp = b.data_ptr<scalar_t>();
    scalar_t* cp = out.data_ptr<scalar_t>();
    forEachSlice(N, m * n * k, [&](int64_t i) {
      kernels::gemmRowMajor(oa->transposed, ob->transposed, m, n, k, scalar_t(1),
                            ap + i * a.stride(0), oa->ld, bp + i * b.stride(0), ob->ld,
                            scalar_t(0), cp + i * out.stride(0), oc->ld);
    });
  });
}


struct CausalAttentionFunction : public torch::autograd::Function<CausalAttentionFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& qIn,
                               const torch::Tensor& kIn, const torch::Tensor& vIn, double scale) {
    auto q = qIn.contiguous(), k = kIn.contiguous(), v = vIn.contiguous();  // (N, T, D)
    const int64_t N = q.size(0), T = q.size(1), D = q.size(2);
    auto p = torch::empty({N, T, T}, q.options());  // (N, T, T); row i valid in [0, i]
    auto y = torch::empty({N, T, D}, q.options());  // (N, T, D)
    for (int64_t r0 = 0; r0 < T; r0 += kBlockRows) {
      const int64_t r1 = std::min(T, r0 + kBlockRows);
      auto scores = p.slice(1, r0, r1).slice(2, 0, r1);  // (N, r1 - r0, r1)
      bmmInto(scores, q.slice(1, r0, r1), k.slice(1, 0, r1).transpose(1, 2));
      AT_DISPATCH_FLOATING_TYPES(p.scalar_type(), "depthlab_causal_softmax", [&] {
        scalar_t* pp = p.data_ptr<scalar_t>();
        forEachSlice(N, (r1 - r0) * r1, [&](int64_t n) {
          kernels::causalSoftmaxForward(pp + n * T * T + r0 * T, r0, r1 - r0, r1, T,
                                        static_cast<scalar_t>(scale));
        });
      });
      bmmInto(y.slice(1, r0, r1), scores, v.slice(1, 0, r1));
    }
    ctx->save_for_backward({q, k, v, p});
    ctx->saved_data["scale"] = scale;
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &q = saved[0], &k = saved[1], &v = saved[2], &p = saved[3];
    const double scale = ctx->saved_data["scale"].toDouble();
    auto dy = grads[0].contiguous();  // (N, T, D)
    const int64_t N = q.size(0), T = q.size(1), D = q.size(2);
    auto ds = torch::empty({N, T, T}, q.options());  // gradient of the scaled scores
    auto dq = torch::empty({N, T, D}, q.options());
    auto dk = torch::empty({N, T, D}, q.options());
    auto dv = torch::empty({N, T, D}, q.options());
    for (int64_t r0 = 0; r0 < T; r0 += kBlockRows) {  // query rows: dp, ds, dq
      const int64_t r1 = std::min(T, r0 + kBlockRows);
      auto block = ds.slice(1, r0, r1).slice(2, 0, r1);                        // (N, r1 - r0, r1)
      bmmInto(block, dy.slice(1, r0, r1), v.slice(1, 0, r1).transpose(1, 2));  // dp
      AT_DISPATCH_FLOATING_TYPES(p.scalar_type(), "depthlab_causal_softmax_backward", [&] {
        const scalar_t* pp = p.data_ptr<scalar_t>();
        scalar_t* dsp = ds.data_ptr<scalar_t>();
        forEachSlice(N, (r1 - r0) * r1, [&](int64_t n) {
          const int64_t at = n * T * T + r0 * T;
          kernels::causalSoftmaxBackward(pp + at, dsp + at, r0, r1 - r0, r1, T,
                                         static_cast<scalar_t>(scale));
        });
      });
      bmmInto(dq.slice(1, r0, r1), block, k.slice(1, 0, r1));
    }
    for (int64_t c0 = 0; c0 < T; c0 += kBlockRows) {  // key columns: rows c0.. see them
      const int64_t c1 = std::min(T, c0 + kBlockRows);
      bmmInto(dv.slice(1, c0, c1), p.slice(1, c0, T).slice(2, c0, c1).transpose(1, 2),
              dy.slice(1, c0, T));
      bmmInto(dk.slice(1, c0, c1), ds.slice(1, c0, T).slice(2, c0, c1).transpose(1, 2),
              q.slice(1, c0, T));
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

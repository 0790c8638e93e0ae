// See causal_attention.h. The block GEMMs write into strided views of one (B, H, T, T) buffer
// and of the (B, T, H, D) output, one BLAS call per block of a (batch, head) slice
// (kernels/blas_gemm.h). The B x H slices split across ATen's intra-op threads, each slice
// computed alone, all its blocks in turn, so results do not depend on the thread count.
#include "model/causal_attention.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

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

// One batched product out = a @ b, run a (batch, head) slice at a time: out (B, H, m, n), a
// strided view into a larger buffer, = a (B, H, m, k) @ b (B, H, k, n). Each slice is one
// BLAS call (ATen's bmm spent as long on per-slice bookkeeping as on these small products).
// Every operand here is a row block of a contiguous (B, H, T, .) tensor, of its transpose, or
// of the (B, T, H, D) output, which the BLAS takes as it is; anything else is a bug, said so.
class SliceGemm {
 public:
  SliceGemm(torch::Tensor out, torch::Tensor a, torch::Tensor b)
      : m_out(std::move(out)), m_a(std::move(a)), m_b(std::move(b)) {
    const auto oa = blasOperand(m_a), ob = blasOperand(m_b), oc = blasOperand(m_out);
    const auto fitsBlasInt = [](int64_t v) { return v <= std::numeric_limits<int>::max(); };
    m_m = m_out.size(2);
    m_n = m_out.size(3);
    m_k = m_a.size(3);
    TORCH_CHECK(oa && ob && oc && !oc->transposed &&
                    fitsBlasInt(std::max({oa->ld, ob->ld, oc->ld, m_m, m_n, m_k})),
                "fusedCausalAttention: a block product the BLAS cannot take: ", m_a.sizes(), " x ",
                m_b.sizes(), " -> ", m_out.sizes());
    m_opA = *oa;
    m_opB = *ob;
    m_ldc = oc->ld;
  }

  /// Slice i = b * H + h.
  template <typename scalar_t>
  void run(int64_t i) const {
    kernels::gemmRowMajor(m_opA.transposed, m_opB.transposed, m_m, m_n, m_k, scalar_t(1),
                          m_a.data_ptr<scalar_t>() + sliceOffset(m_a, i), m_opA.ld,
                          m_b.data_ptr<scalar_t>() + sliceOffset(m_b, i), m_opB.ld, scalar_t(0),
                          m_out.data_ptr<scalar_t>() + sliceOffset(m_out, i), m_ldc);
  }

 private:
  torch::Tensor m_out, m_a, m_b;
  BlasOperand m_opA, m_opB;
  int64_t m_ldc = 0, m_m = 0, m_n = 0, m_k = 0;
};

// x with the strides a freshly allocated contiguous tensor of its shape has: contiguous()
// keeps whatever stride a size-1 dimension had (an expanded or sliced time axis at T = 1),
// which the BLAS operands must not see.
torch::Tensor standardLayout(const torch::Tensor& x) {
  int64_t expected = 1;
  bool standard = true;
  for (int64_t d = x.dim() - 1; d >= 0; --d) {
    standard = standard && x.stride(d) == expected;
    expected *= x.size(d);
  }
  return standard ? x : x.clone(at::MemoryFormat::Contiguous);
}

// The row (or column) blocks [begin, end) of T.
std::vector<std::pair<int64_t, int64_t>> blocksOf(int64_t T) {
  std::vector<std::pair<int64_t, int64_t>> out;
  const int64_t rows = blockRowsFor(T);
  for (int64_t r0 = 0; r0 < T; r0 += rows) out.emplace_back(r0, std::min(T, r0 + rows));
  return out;
}

// Heads in, rows out: q, k, v (B, H, T, D) -> y (B, T, H * D), the layout the output
// projection multiplies, written there by the GEMMs themselves (no transposed copy forward,
// none of the gradient backward). Time is dimension 2 of every (B, H, T, .) operand.
// Each (batch, head) slice runs all its blocks before the next slice starts, so its q, k, v
// and scores stay in the core's caches between the blocks' GEMMs and softmax passes.
struct CausalAttentionFunction : public torch::autograd::Function<CausalAttentionFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& qIn,
                               const torch::Tensor& kIn, const torch::Tensor& vIn, double scale) {
    auto q = standardLayout(qIn), k = standardLayout(kIn), v = standardLayout(vIn);  // (B, H, T, D)
    const int64_t B = q.size(0), H = q.size(1), T = q.size(2), D = q.size(3);
    auto p = torch::empty({B, H, T, T}, q.options());  // (B, H, T, T); row i valid in [0, i]
    auto y = torch::empty({B, T, H, D}, q.options());  // (B, T, H, D)
    auto yHeads = y.permute({0, 2, 1, 3});             // (B, H, T, D) view of y
    struct Block {
      int64_t r0, r1;
      SliceGemm scores, out;  // p[r0:r1, :r1] = q[r0:r1] k[:r1]^T; y[r0:r1] = p[r0:r1, :r1] v[:r1]
    };
    std::vector<Block> blocks;
    for (const auto& [r0, r1] : blocksOf(T)) {
      auto scores = p.slice(2, r0, r1).slice(3, 0, r1);  // (B, H, r1 - r0, r1)
      blocks.push_back({r0, r1,
                        SliceGemm(scores, q.slice(2, r0, r1), k.slice(2, 0, r1).transpose(2, 3)),
                        SliceGemm(yHeads.slice(2, r0, r1), scores, v.slice(2, 0, r1))});
    }
    AT_DISPATCH_FLOATING_TYPES(p.scalar_type(), "depthlab_causal_attention", [&] {
      scalar_t* pp = p.data_ptr<scalar_t>();
      forEachSlice(B * H, T * T * D, [&](int64_t n) {
        for (const auto& b : blocks) {
          b.scores.run<scalar_t>(n);
          kernels::causalSoftmaxForward(pp + n * T * T + b.r0 * T, b.r0, b.r1 - b.r0, b.r1, T,
                                        static_cast<scalar_t>(scale));
          b.out.run<scalar_t>(n);
        }
      });
    });
    ctx->save_for_backward({q, k, v, p});
    ctx->saved_data["scale"] = scale;
    return y.view({B, T, H * D});
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &q = saved[0], &k = saved[1], &v = saved[2], &p = saved[3];
    const double scale = ctx->saved_data["scale"].toDouble();
    const int64_t B = q.size(0), H = q.size(1), T = q.size(2), D = q.size(3);
    // (B, T, H * D) as it comes from the output projection -> a (B, H, T, D) view of it
    auto dy = standardLayout(grads[0]).view({B, T, H, D}).permute({0, 2, 1, 3});
    auto ds = torch::empty({B, H, T, T}, q.options());  // gradient of the scaled scores
    auto dq = torch::empty({B, H, T, D}, q.options());
    auto dk = torch::empty({B, H, T, D}, q.options());
    auto dv = torch::empty({B, H, T, D}, q.options());
    struct RowBlock {  // query rows r0..r1: dp (into ds), ds, dq
      int64_t r0, r1;
      SliceGemm dp, dq;
    };
    struct ColumnBlock {  // key columns c0..c1, seen by rows c0..: dv, dk
      SliceGemm dv, dk;
    };
    std::vector<RowBlock> rows;
    std::vector<ColumnBlock> columns;
    for (const auto& [r0, r1] : blocksOf(T)) {
      auto block = ds.slice(2, r0, r1).slice(3, 0, r1);  // (B, H, r1 - r0, r1)
      rows.push_back({r0, r1,
                      SliceGemm(block, dy.slice(2, r0, r1), v.slice(2, 0, r1).transpose(2, 3)),
                      SliceGemm(dq.slice(2, r0, r1), block, k.slice(2, 0, r1))});
    }
    for (const auto& [c0, c1] : blocksOf(T)) {
      columns.push_back(
          {SliceGemm(dv.slice(2, c0, c1), p.slice(2, c0, T).slice(3, c0, c1).transpose(2, 3),
                     dy.slice(2, c0, T)),
           SliceGemm(dk.slice(2, c0, c1), ds.slice(2, c0, T).slice(3, c0, c1).transpose(2, 3),
                     q.slice(2, c0, T))});
    }
    AT_DISPATCH_FLOATING_TYPES(p.scalar_type(), "depthlab_causal_attention_backward", [&] {
      const scalar_t* pp = p.data_ptr<scalar_t>();
      scalar_t* dsp = ds.data_ptr<scalar_t>();
      forEachSlice(B * H, 2 * T * T * D, [&](int64_t n) {
        for (const auto& b : rows) {
          b.dp.run<scalar_t>(n);
          const int64_t at = n * T * T + b.r0 * T;
          kernels::causalSoftmaxBackward(pp + at, dsp + at, b.r0, b.r1 - b.r0, b.r1, T,
                                         static_cast<scalar_t>(scale));
          b.dq.run<scalar_t>(n);
        }
        for (const auto& c : columns) {
          c.dv.run<scalar_t>(n);
          c.dk.run<scalar_t>(n);
        }
      });
    });
    return {dq, dk, dv, torch::Tensor()};
  }
};

}  // namespace

torch::Tensor fusedCausalAttention(const torch::Tensor& q, const torch::Tensor& k,
                                   const torch::Tensor& v, double scale) {
  return CausalAttentionFunction::apply(q, k, v, scale);
}

}  // namespace depthlab::model

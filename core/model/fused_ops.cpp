// See fused_ops.h. Rows are split across ATen's intra-op threads with the same grain ATen's
// own elementwise kernels use; reductions over rows (the RMSNorm weight gradient) go through
// fixed blocks of rows reduced in order, so results do not depend on the thread count.
#include "model/fused_ops.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <vector>

#include "kernels/cpu_kernels.h"

namespace depthlab::model {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

int64_t grainFor(int64_t elementsPerUnit) {
  return std::max<int64_t>(1, at::internal::GRAIN_SIZE / std::max<int64_t>(1, elementsPerUnit));
}

constexpr int64_t kRowsPerBlock = 64;  // rows per partial sum of the norm weight gradient

struct RmsNormFunction : public torch::autograd::Function<RmsNormFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, double eps, double scale) {
    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    const int64_t C = xc.size(-1), N = xc.numel() / C;
    auto y = torch::empty_like(xc);                  // (..., C)
    auto rstd = torch::empty({N}, xc.options());     // (N)
    AT_DISPATCH_FLOATING_TYPES(xc.scalar_type(), "depthlab_rms_norm", [&] {
      const scalar_t* xp = xc.data_ptr<scalar_t>();
      const scalar_t* wp = wc.data_ptr<scalar_t>();
      scalar_t* yp = y.data_ptr<scalar_t>();
      scalar_t* rp = rstd.data_ptr<scalar_t>();
      at::parallel_for(0, N, grainFor(C), [&](int64_t b, int64_t e) {
        kernels::rmsNormForward(xp, wp, yp, rp, b, e, C, eps, scale);
      });
    });
    ctx->save_for_backward({xc, wc, rstd});
    ctx->saved_data["scale"] = scale;
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& x = saved[0];
    const auto& w = saved[1];
    const auto& rstd = saved[2];
    const double scale = ctx->saved_data["scale"].toDouble();
    auto dy = grads[0].contiguous();
    const int64_t C = x.size(-1), N = x.numel() / C;
    const int64_t nBlocks = (N + kRowsPerBlock - 1) / kRowsPerBlock;
    auto dx = torch::empty_like(x);
    std::vector<double> partial(static_cast<size_t>(nBlocks * C), 0.0);  // (blocks, C)
    auto dw = torch::empty({C}, w.options());
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "depthlab_rms_norm_backward", [&] {
      const scalar_t* dyp = dy.data_ptr<scalar_t>();
      const scalar_t* xp = x.data_ptr<scalar_t>();
      const scalar_t* wp = w.data_ptr<scalar_t>();
      const scalar_t* rp = rstd.data_ptr<scalar_t>();
      scalar_t* dxp = dx.data_ptr<scalar_t>();
      at::parallel_for(0, nBlocks, grainFor(kRowsPerBlock * C), [&](int64_t b, int64_t e) {
        for (int64_t blk = b; blk < e; ++blk) {
          kernels::rmsNormBackward(dyp, xp, wp, rp, dxp, partial.data() + blk * C,
                                   blk * kRowsPerBlock, std::min(N, (blk + 1) * kRowsPerBlock),
                                   C, scale);
        }
      });
      scalar_t* dwp = dw.data_ptr<scalar_t>();
      for (int64_t j = 0; j < C; ++j) {
        double s = 0;
        for (int64_t blk = 0; blk < nBlocks; ++blk) s += partial[static_cast<size_t>(blk * C + j)];
        dwp[j] = static_cast<scalar_t>(s);
      }
    });
    return {dx, dw, torch::Tensor(), torch::Tensor()};
  }
};

struct RopeSplitHeadsFunction : public torch::autograd::Function<RopeSplitHeadsFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& cos, const torch::Tensor& sin,
                               int64_t heads) {
    // (B, T, H*D); a part of a wider product (q of one q/k/v GEMM) is read in place
    const bool rowsInPlace = x.dim() == 3 && x.stride(2) == 1 && x.stride(1) >= x.size(2) &&
                             x.stride(0) == x.size(1) * x.stride(1);
    auto xc = rowsInPlace ? x : x.contiguous();
    const int64_t B = xc.size(0), T = xc.size(1), C = xc.size(2), D = C / heads;
    const int64_t rowStride = xc.stride(1);
    auto cs = cos.to(xc.scalar_type()).contiguous();            // (>= T, D)
    auto sn = sin.to(xc.scalar_type()).contiguous();
    auto y = torch::empty({B, heads, T, D}, xc.options());      // (B, H, T, D)
    AT_DISPATCH_FLOATING_TYPES(xc.scalar_type(), "depthlab_rope", [&] {
      const scalar_t* xp = xc.data_ptr<scalar_t>();
      const scalar_t* cp = cs.data_ptr<scalar_t>();
      const scalar_t* sp = sn.data_ptr<scalar_t>();
      scalar_t* yp = y.data_ptr<scalar_t>();
      at::parallel_for(0, B * T, grainFor(C), [&](int64_t b, int64_t e) {
        kernels::ropeSplitHeadsForward(xp, cp, sp, yp, b, e, T, heads, D, rowStride);
      });
    });
    ctx->save_for_backward({cs, sn});
    ctx->saved_data["heads"] = heads;
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& cs = saved[0];
    const auto& sn = saved[1];
    const int64_t heads = ctx->saved_data["heads"].toInt();
    auto dy = grads[0].contiguous();                            // (B, H, T, D)
    const int64_t B = dy.size(0), T = dy.size(2), D = dy.size(3);
    auto dx = torch::empty({B, T, heads * D}, dy.options());    // (B, T, H*D)
    AT_DISPATCH_FLOATING_TYPES(dy.scalar_type(), "depthlab_rope_backward", [&] {
      const scalar_t* dyp = dy.data_ptr<scalar_t>();
      const scalar_t* cp = cs.data_ptr<scalar_t>();
      const scalar_t* sp = sn.data_ptr<scalar_t>();
      scalar_t* dxp = dx.data_ptr<scalar_t>();
      at::parallel_for(0, B * T, grainFor(heads * D), [&](int64_t b, int64_t e) {
        kernels::ropeSplitHeadsBackward(dyp, cp, sp, dxp, b, e, T, heads, D);
      });
    });
    return {dx, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

bool fusedOpsApply(const torch::Tensor& x) {
  return kernels::fusedKernelsEnabled() && x.device().is_cpu() && x.layout() == torch::kStrided &&
         (x.scalar_type() == torch::kFloat32 || x.scalar_type() == torch::kFloat64);
}

torch::Tensor fusedRmsNorm(const torch::Tensor& x, const torch::Tensor& weight, double eps,
                           double scale) {
  return RmsNormFunction::apply(x, weight.to(x.scalar_type()), eps, scale);
}

torch::Tensor fusedRopeSplitHeads(const torch::Tensor& x, const torch::Tensor& cos,
                                  const torch::Tensor& sin, int64_t heads) {
  return RopeSplitHeadsFunction::apply(x, cos, sin, heads);
}

}  // namespace depthlab::model

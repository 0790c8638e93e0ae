// See fused_ops.h. Rows are split across ATen's intra-op threads with the same grain ATen's
// own elementwise kernels use; reductions over rows (the RMSNorm weight gradient) go through
// fixed blocks of rows reduced in order, so results do not depend on the thread count.
#include "model/fused_ops.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <vector>

#include "kernels/cpu_kernels.h"
#include "model/cpu_parallel.h"

namespace depthlab::model {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

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

}  // namespace

bool fusedOpsApply(const torch::Tensor& x) {
  return kernels::fusedKernelsEnabled() && x.device().is_cpu() && x.layout() == torch::kStrided &&
         (x.scalar_type() == torch::kFloat32 || x.scalar_type() == torch::kFloat64);
}

torch::Tensor fusedRmsNorm(const torch::Tensor& x, const torch::Tensor& weight, double eps,
                           double scale) {
  return RmsNormFunction::apply(x, weight.to(x.scalar_type()), eps, scale);
}

}  // namespace depthlab::model

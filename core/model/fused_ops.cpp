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

// dx and dw of y = scale * w * x * rstd for x (..., C), with dStream (x's shape, or undefined)
// added into dx row by row as it is made: the gradient x also gets from the residual stream.
std::pair<torch::Tensor, torch::Tensor> rmsNormBackward(const torch::Tensor& dyIn,
                                                        const torch::Tensor& x,
                                                        const torch::Tensor& w,
                                                        const torch::Tensor& rstd,
                                                        const torch::Tensor& dStream,
                                                        double scale) {
  auto dy = dyIn.defined() ? dyIn.contiguous() : torch::zeros_like(x);
  const auto ds = dStream.defined() ? dStream.contiguous() : torch::Tensor();
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
    const scalar_t* dsp = ds.defined() ? ds.data_ptr<scalar_t>() : nullptr;
    scalar_t* dxp = dx.data_ptr<scalar_t>();
    at::parallel_for(0, nBlocks, grainFor(kRowsPerBlock * C), [&](int64_t b, int64_t e) {
      for (int64_t blk = b; blk < e; ++blk) {
        const int64_t r0 = blk * kRowsPerBlock, r1 = std::min(N, (blk + 1) * kRowsPerBlock);
        kernels::rmsNormBackward(dyp, xp, wp, rp, dxp, partial.data() + blk * C, r0, r1, C,
                                 scale);
        if (dsp) kernels::addRows(dxp, dsp, dxp, r0, r1, C);
      }
    });
    scalar_t* dwp = dw.data_ptr<scalar_t>();
    for (int64_t j = 0; j < C; ++j) {
      double s = 0;
      for (int64_t blk = 0; blk < nBlocks; ++blk) s += partial[static_cast<size_t>(blk * C + j)];
      dwp[j] = static_cast<scalar_t>(s);
    }
  });
  return {dx, dw};
}

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
    auto [dx, dw] = rmsNormBackward(grads[0], saved[0], saved[1], saved[2], torch::Tensor(),
                                    ctx->saved_data["scale"].toDouble());
    return {dx, dw, torch::Tensor(), torch::Tensor()};
  }
};

// sum = x + residual and y = RMSNorm(sum) in one pass over each block of rows (the sum is
// still in cache when the norm reads it back); backward adds the stream's own gradient into
// the norm's dx in the same pass, where the engine would add the two in a pass of its own.
// The same roundings as x + residual followed by RmsNormFunction, forward and backward.
struct AddRmsNormFunction : public torch::autograd::Function<AddRmsNormFunction> {
  static constexpr int64_t kRowsPerPass = 16;  // rows added, then normalised, while in L1

  static variable_list forward(AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& residual, const torch::Tensor& weight,
                               double eps, double scale) {
    auto xc = x.contiguous(), rc = residual.contiguous(), wc = weight.contiguous();
    const int64_t C = xc.size(-1), N = xc.numel() / C;
    auto sum = torch::empty_like(xc);             // (..., C)
    auto y = torch::empty_like(xc);               // (..., C)
    auto rstd = torch::empty({N}, xc.options());  // (N)
    AT_DISPATCH_FLOATING_TYPES(xc.scalar_type(), "depthlab_add_rms_norm", [&] {
      const scalar_t* xp = xc.data_ptr<scalar_t>();
      const scalar_t* rp = rc.data_ptr<scalar_t>();
      const scalar_t* wp = wc.data_ptr<scalar_t>();
      scalar_t* sp = sum.data_ptr<scalar_t>();
      scalar_t* yp = y.data_ptr<scalar_t>();
      scalar_t* rsp = rstd.data_ptr<scalar_t>();
      at::parallel_for(0, N, grainFor(C), [&](int64_t b, int64_t e) {
        for (int64_t r0 = b; r0 < e; r0 += kRowsPerPass) {
          const int64_t r1 = std::min(e, r0 + kRowsPerPass);
          kernels::addRows(xp, rp, sp, r0, r1, C);
          kernels::rmsNormForward(sp, wp, yp, rsp, r0, r1, C, eps, scale);
        }
      });
    });
    ctx->save_for_backward({sum, wc, rstd});
    ctx->saved_data["scale"] = scale;
    return {sum, y};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();  // sum, weight, rstd
    auto [dx, dw] = rmsNormBackward(grads[1], saved[0], saved[1], saved[2], grads[0],
                                    ctx->saved_data["scale"].toDouble());
    return {dx, dx, dw, torch::Tensor(), torch::Tensor()};  // x and residual alike
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

std::pair<torch::Tensor, torch::Tensor> fusedAddRmsNorm(const torch::Tensor& x,
                                                        const torch::Tensor& residual,
                                                        const torch::Tensor& weight, double eps,
                                                        double scale) {
  auto out = AddRmsNormFunction::apply(x, residual, weight.to(x.scalar_type()), eps, scale);
  return {out[0], out[1]};
}

}  // namespace depthlab::model

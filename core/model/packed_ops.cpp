// See packed_ops.h. Rows (b, t) are split across ATen's intra-op threads; every element is
// computed independently, so results do not depend on the thread count.
#include "model/packed_ops.h"

#include <ATen/Parallel.h>

#include <algorithm>

#include "kernels/cpu_kernels.h"
#include "model/cpu_parallel.h"

namespace depthlab::model {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct QkvHeadsFunction : public torch::autograd::Function<QkvHeadsFunction> {
  static variable_list forward(AutogradContext* ctx, const torch::Tensor& qkv,
                               const torch::Tensor& cos, const torch::Tensor& sin, int64_t heads,
                               int64_t kvHeads) {
    auto x = qkv.contiguous();  // (B, T, (H + 2K) D)
    const int64_t B = x.size(0), T = x.size(1), W = x.size(2), D = W / (heads + 2 * kvHeads);
    TORCH_CHECK(D * (heads + 2 * kvHeads) == W, "fusedQkvHeads: width ", W,
                " is not (heads + 2 kv heads) x head dim");
    auto cs = cos.to(x.scalar_type()).contiguous();  // (>= T, D)
    auto sn = sin.to(x.scalar_type()).contiguous();
    auto q = torch::empty({B, heads, T, D}, x.options());
    auto k = torch::empty({B, kvHeads, T, D}, x.options());
    auto v = torch::empty({B, kvHeads, T, D}, x.options());
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "depthlab_qkv_heads", [&] {
      const scalar_t* xp = x.data_ptr<scalar_t>();
      const scalar_t* cp = cs.data_ptr<scalar_t>();
      const scalar_t* sp = sn.data_ptr<scalar_t>();
      scalar_t* qp = q.data_ptr<scalar_t>();
      scalar_t* kp = k.data_ptr<scalar_t>();
      scalar_t* vp = v.data_ptr<scalar_t>();
      at::parallel_for(0, B * T, grainFor(W), [&](int64_t b, int64_t e) {
        kernels::ropeSplitHeadsForward(xp, cp, sp, qp, b, e, T, heads, D, W);
        kernels::ropeSplitHeadsForward(xp + heads * D, cp, sp, kp, b, e, T, kvHeads, D, W);
        kernels::splitHeads(xp + (heads + kvHeads) * D, vp, b, e, T, kvHeads, D, W);
      });
    });
    ctx->save_for_backward({cs, sn});
    ctx->saved_data["heads"] = heads;
    ctx->saved_data["kvHeads"] = kvHeads;
    ctx->saved_data["B"] = B;
    ctx->saved_data["T"] = T;
    ctx->saved_data["D"] = D;
    return {q, k, v};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& cs = saved[0];
    const auto& sn = saved[1];
    const int64_t heads = ctx->saved_data["heads"].toInt();
    const int64_t kvHeads = ctx->saved_data["kvHeads"].toInt();
    const int64_t B = ctx->saved_data["B"].toInt(), T = ctx->saved_data["T"].toInt();
    const int64_t D = ctx->saved_data["D"].toInt(), W = (heads + 2 * kvHeads) * D;
    const int64_t headCounts[3] = {heads, kvHeads, kvHeads};
    variable_list dys(3);  // (B, H|K, T, D) each; an output nothing used gets zeros
    for (int i = 0; i < 3; ++i) {
      dys[i] = grads[i].defined() ? grads[i].contiguous()
                                  : torch::zeros({B, headCounts[i], T, D}, cs.options());
    }
    auto dx = torch::empty({B, T, W}, cs.options());  // (B, T, (H + 2K) D)
    AT_DISPATCH_FLOATING_TYPES(dx.scalar_type(), "depthlab_qkv_heads_backward", [&] {
      const scalar_t* cp = cs.data_ptr<scalar_t>();
      const scalar_t* sp = sn.data_ptr<scalar_t>();
      const scalar_t* dq = dys[0].data_ptr<scalar_t>();
      const scalar_t* dk = dys[1].data_ptr<scalar_t>();
      const scalar_t* dv = dys[2].data_ptr<scalar_t>();
      scalar_t* dxp = dx.data_ptr<scalar_t>();
      at::parallel_for(0, B * T, grainFor(W), [&](int64_t b, int64_t e) {
        kernels::ropeSplitHeadsBackward(dq, cp, sp, dxp, b, e, T, heads, D, W);
        kernels::ropeSplitHeadsBackward(dk, cp, sp, dxp + heads * D, b, e, T, kvHeads, D, W);
        kernels::mergeHeads(dv, dxp + (heads + kvHeads) * D, b, e, T, kvHeads, D, W);
      });
    });
    return {dx, torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

struct SwigluFunction : public torch::autograd::Function<SwigluFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& gu) {
    auto x = gu.contiguous();  // (..., 2F)
    const int64_t F = x.size(-1) / 2, N = x.numel() / std::max<int64_t>(1, 2 * F);
    TORCH_CHECK(2 * F == x.size(-1), "fusedSwiglu: odd width ", x.size(-1));
    auto sizes = x.sizes().vec();
    sizes.back() = F;
    auto h = torch::empty(sizes, x.options());  // (..., F)
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "depthlab_swiglu", [&] {
      const scalar_t* xp = x.data_ptr<scalar_t>();
      scalar_t* hp = h.data_ptr<scalar_t>();
      at::parallel_for(0, N, grainFor(3 * F), [&](int64_t b, int64_t e) {
        kernels::swigluForward(xp, hp, b, e, F);
      });
    });
    ctx->save_for_backward({x});
    return h;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto x = ctx->get_saved_variables()[0];  // (..., 2F)
    auto dh = grads[0].contiguous();                // (..., F)
    const int64_t F = x.size(-1) / 2, N = x.numel() / std::max<int64_t>(1, 2 * F);
    auto dx = torch::empty_like(x);  // (..., 2F)
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "depthlab_swiglu_backward", [&] {
      const scalar_t* xp = x.data_ptr<scalar_t>();
      const scalar_t* dhp = dh.data_ptr<scalar_t>();
      scalar_t* dxp = dx.data_ptr<scalar_t>();
      at::parallel_for(0, N, grainFor(5 * F), [&](int64_t b, int64_t e) {
        kernels::swigluBackward(dhp, xp, dxp, b, e, F);
      });
    });
    return {dx};
  }
};

}  // namespace

std::vector<torch::Tensor> fusedQkvHeads(const torch::Tensor& qkv, const torch::Tensor& cos,
                                         const torch::Tensor& sin, int64_t heads,
                                         int64_t kvHeads) {
  return QkvHeadsFunction::apply(qkv, cos, sin, heads, kvHeads);
}

torch::Tensor fusedSwiglu(const torch::Tensor& gu) { return SwigluFunction::apply(gu); }

}  // namespace depthlab::model

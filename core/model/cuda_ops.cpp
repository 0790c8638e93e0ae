// See cuda_ops.h. Without DEPTHLAB_WITH_CUDA (Debian's CPU LibTorch) only the switch exists and
// cudaOpsApply() is always false; the functions are never reached.
#include "model/cuda_ops.h"

#include <cstdint>
#include <stdexcept>

#include "kernels/cpu_kernels.h"
#include "util/env_switch.h"

#ifdef DEPTHLAB_WITH_CUDA
#include <ATen/autocast_mode.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "kernels/cuda/cuda_kernels.h"
#endif

namespace depthlab::model {

namespace {

// Read from the environment once, at start-up.
bool g_enabled = util::envSwitch("DEPTHLAB_CUDA_KERNELS", true);
bool g_residualFusion = util::envSwitch("DEPTHLAB_CUDA_FUSED_RESIDUAL", true);
bool g_ropeVectorLoads = util::envSwitch("DEPTHLAB_CUDA_ROPE_VECTOR", false);

}  // namespace

void setCudaResidualFusionEnabled(bool enabled) { g_residualFusion = enabled; }
bool cudaResidualFusionEnabled() { return g_residualFusion; }
void setCudaRopeVectorLoads(bool on) { g_ropeVectorLoads = on; }
bool cudaRopeVectorLoads() { return g_ropeVectorLoads; }
void setCudaKernelsEnabled(bool enabled) { g_enabled = enabled; }
bool cudaKernelsEnabled() { return g_enabled; }

#ifndef DEPTHLAB_WITH_CUDA

bool cudaKernelsBuilt() { return false; }
bool cudaOpsApply(const torch::Tensor&) { return false; }
namespace {
[[noreturn]] void notBuilt() {
  throw std::logic_error("DepthLab was built without its CUDA kernels (LibTorch without CUDA)");
}
}  // namespace
torch::Tensor cudaRmsNorm(const torch::Tensor&, const torch::Tensor&, double, double,
                          std::optional<torch::ScalarType>) {
  notBuilt();
}
std::optional<torch::ScalarType> cudaAutocastMatmulDtype() { return std::nullopt; }
std::pair<torch::Tensor, torch::Tensor> cudaAddRmsNorm(const torch::Tensor&, const torch::Tensor&,
                                                      const torch::Tensor&, double, double) {
  notBuilt();
}
torch::Tensor cudaSwiglu(const torch::Tensor&, const torch::Tensor&) { notBuilt(); }
torch::Tensor cudaRopeSplitHeads(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&,
                                 int64_t) {
  notBuilt();
}
torch::Tensor cudaCrossEntropy(const torch::Tensor&, const torch::Tensor&) { notBuilt(); }

#else

namespace {

namespace kc = kernels::cuda;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

kc::DType dtypeOf(const torch::Tensor& t) {
  switch (t.scalar_type()) {
    case torch::kFloat32: return kc::DType::Float32;
    case torch::kBFloat16: return kc::DType::BFloat16;
    case torch::kFloat16: return kc::DType::Float16;
    default: throw std::invalid_argument("cuda_ops: unsupported dtype");
  }
}

// Contiguous with a 16-byte aligned start (a view with a storage offset may not be): the
// kernels' vector loads need it.
torch::Tensor alignedContiguous(const torch::Tensor& t) {
  auto c = t.contiguous();
  return reinterpret_cast<std::uintptr_t>(c.data_ptr()) % 16 == 0 ? c : c.clone();
}

kc::Stream currentStream(const torch::Tensor& t) {
  return c10::cuda::getCurrentCUDAStream(t.device().index()).stream();
}

struct RmsNormFunction : public torch::autograd::Function<RmsNormFunction> {
  // x (..., C) float32, weight (C) float32 -> y (..., C) of type `out` (float32 / bf16 / fp16).
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, double eps, double scale,
                               int64_t out) {
    c10::cuda::CUDAGuard guard(x.device());
    auto xc = alignedContiguous(x);
    auto wc = alignedContiguous(weight);
    const int64_t C = xc.size(-1), N = xc.numel() / C;
    auto y = torch::empty(xc.sizes(), xc.options().dtype(static_cast<c10::ScalarType>(out)));
    auto rstd = torch::empty({N}, xc.options());                     // (N)
    kc::rmsNormForward(xc.data_ptr<float>(), wc.data_ptr<float>(), dtypeOf(y), y.data_ptr(),
                       rstd.data_ptr<float>(), N, C, static_cast<float>(eps),
                       static_cast<float>(scale), currentStream(xc));
    ctx->save_for_backward({xc, wc, rstd});
    ctx->saved_data["scale"] = scale;
    return y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &x = saved[0], &w = saved[1], &rstd = saved[2];
    c10::cuda::CUDAGuard guard(x.device());
    auto dy = grads[0];
    if (dy.scalar_type() != torch::kFloat32 && dy.scalar_type() != torch::kBFloat16 &&
        dy.scalar_type() != torch::kFloat16) {
      dy = dy.to(torch::kFloat32);
    }
    dy = alignedContiguous(dy);
    const int64_t C = x.size(-1), N = x.numel() / C;
    auto dx = torch::empty_like(x);
    auto partial = torch::empty({kc::rmsNormPartialRows(N, C), C}, x.options());  // (P, C)
    kc::rmsNormBackward(dtypeOf(dy), dy.data_ptr(), x.data_ptr<float>(), w.data_ptr<float>(),
                        rstd.data_ptr<float>(), dx.data_ptr<float>(), partial.data_ptr<float>(),
                        N, C, static_cast<float>(ctx->saved_data["scale"].toDouble()),
                        currentStream(x));
    return {dx, partial.sum(0), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

struct AddRmsNormFunction : public torch::autograd::Function<AddRmsNormFunction> {
  // x (..., C) float32, residual (..., C) float32 / bf16 / fp16, weight (C) float32 ->
  // {sum = x + residual (float32), y = rmsNorm(sum) in the residual's type}.
  static variable_list forward(AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& residual, const torch::Tensor& weight,
                               double eps, double scale) {
    c10::cuda::CUDAGuard guard(x.device());
    ctx->set_materialize_grads(false);
    auto xc = alignedContiguous(x), rc = alignedContiguous(residual);
    auto wc = alignedContiguous(weight);
    const int64_t C = xc.size(-1), N = xc.numel() / C;
    auto sum = torch::empty_like(xc);                                // (..., C) float32
    auto y = torch::empty_like(rc);                                  // (..., C)
    auto rstd = torch::empty({N}, xc.options());                     // (N)
    kc::addRmsNormForward(xc.data_ptr<float>(), rc.data_ptr(), sum.data_ptr<float>(),
                          wc.data_ptr<float>(), dtypeOf(y), y.data_ptr(), rstd.data_ptr<float>(),
                          N, C, static_cast<float>(eps), static_cast<float>(scale),
                          currentStream(xc));
    ctx->save_for_backward({sum, wc, rstd});
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["residual_dtype"] = static_cast<int64_t>(rc.scalar_type());
    return {sum, y};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &sum = saved[0], &w = saved[1], &rstd = saved[2];
    c10::cuda::CUDAGuard guard(sum.device());
    const auto residualType = static_cast<c10::ScalarType>(ctx->saved_data["residual_dtype"].toInt());
    auto dsum = grads[0].defined() ? alignedContiguous(grads[0].to(torch::kFloat32)) : torch::Tensor();
    auto dy = grads[1].defined() ? alignedContiguous(grads[1].to(residualType))
                                 : torch::zeros(sum.sizes(), sum.options().dtype(residualType));
    const int64_t C = sum.size(-1), N = sum.numel() / C;
    auto dx = torch::empty_like(sum);
    auto dres = torch::empty_like(dy);  // never dx itself: autograd may add into one in place
    auto partial = torch::empty({kc::rmsNormPartialRows(N, C), C}, sum.options());  // (P, C)
    kc::addRmsNormBackward(dtypeOf(dy), dy.data_ptr(), sum.data_ptr<float>(), w.data_ptr<float>(),
                           rstd.data_ptr<float>(),
                           dsum.defined() ? dsum.data_ptr<float>() : nullptr, dx.data_ptr<float>(),
                           dres.data_ptr(),
                           partial.data_ptr<float>(), N, C,
                           static_cast<float>(ctx->saved_data["scale"].toDouble()),
                           currentStream(sum));
    return {dx, dres, partial.sum(0), torch::Tensor(), torch::Tensor()};
  }
};

struct SwigluFunction : public torch::autograd::Function<SwigluFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& g, const torch::Tensor& u) {
    c10::cuda::CUDAGuard guard(g.device());
    auto gc = g.contiguous(), uc = u.to(g.scalar_type()).contiguous();
    auto h = torch::empty_like(gc);
    kc::swigluForward(dtypeOf(gc), gc.data_ptr(), uc.data_ptr(), h.data_ptr(), gc.numel(),
                      currentStream(gc));
    ctx->save_for_backward({gc, uc});
    return h;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &g = saved[0], &u = saved[1];
    c10::cuda::CUDAGuard guard(g.device());
    auto dh = grads[0].to(g.scalar_type()).contiguous();
    auto dg = torch::empty_like(g), du = torch::empty_like(u);
    kc::swigluBackward(dtypeOf(g), dh.data_ptr(), g.data_ptr(), u.data_ptr(), dg.data_ptr(),
                       du.data_ptr(), g.numel(), currentStream(g));
    return {dg, du};
  }
};

struct RopeFunction : public torch::autograd::Function<RopeFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& cos, const torch::Tensor& sin, int64_t heads) {
    c10::cuda::CUDAGuard guard(x.device());
    auto xc = x.contiguous();
    const int64_t B = xc.size(0), T = xc.size(1), D = xc.size(2) / heads;
    auto cs = cos.slice(0, 0, T).to(torch::kFloat32).contiguous();  // (T, D)
    auto sn = sin.slice(0, 0, T).to(torch::kFloat32).contiguous();
    auto y = torch::empty({B, heads, T, D}, xc.options());
    kc::ropeSplitHeadsForward(dtypeOf(xc), xc.data_ptr(), cs.data_ptr<float>(),
                              sn.data_ptr<float>(), y.data_ptr(), B, T, heads, D, g_ropeVectorLoads,
                              currentStream(xc));
    ctx->save_for_backward({cs, sn});
    ctx->saved_data["heads"] = heads;
    ctx->saved_data["dtype"] = static_cast<int64_t>(xc.scalar_type());
    return y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &cs = saved[0], &sn = saved[1];
    const int64_t heads = ctx->saved_data["heads"].toInt();
    const auto dtype = static_cast<c10::ScalarType>(ctx->saved_data["dtype"].toInt());
    c10::cuda::CUDAGuard guard(cs.device());
    auto dy = grads[0].to(dtype);  // (B, H, T, D), any strides with D contiguous
    if (dy.stride(3) != 1) dy = dy.contiguous();
    const int64_t B = dy.size(0), T = dy.size(2), D = dy.size(3);
    auto dx = torch::empty({B, T, heads * D}, dy.options());
    const int64_t strides[3] = {dy.stride(0), dy.stride(1), dy.stride(2)};
    kc::ropeSplitHeadsBackward(dtypeOf(dy), dy.data_ptr(), strides, cs.data_ptr<float>(),
                               sn.data_ptr<float>(), dx.data_ptr(), B, T, heads, D,
                               g_ropeVectorLoads, currentStream(dy));
    return {dx, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

struct CrossEntropyFunction : public torch::autograd::Function<CrossEntropyFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& logits,
                               const torch::Tensor& targets) {
    c10::cuda::CUDAGuard guard(logits.device());
    auto lc = logits.contiguous();
    auto tc = targets.to(torch::kInt64).contiguous();
    const int64_t N = lc.size(0), V = lc.size(1);
    auto f32 = lc.options().dtype(torch::kFloat32);
    auto rows = torch::empty({N}, f32), lse = torch::empty({N}, f32);
    kc::crossEntropyForward(dtypeOf(lc), lc.data_ptr(), tc.data_ptr<int64_t>(),
                            rows.data_ptr<float>(), lse.data_ptr<float>(), N, V, currentStream(lc));
    // The mean over the targets that count (pads, -100, are 0 in `rows`), counted on the
    // device: nothing is read on the host.
    auto counted = tc.ne(-100).sum().to(torch::kFloat32).clamp_min(1.0f);  // ()
    ctx->save_for_backward({lc, tc, lse, counted});
    return rows.sum() / counted;  // ()
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &lc = saved[0], &tc = saved[1], &lse = saved[2], &counted = saved[3];
    c10::cuda::CUDAGuard guard(lc.device());
    // () on the device, never read here: the incoming gradient over the counted targets
    auto g = (grads[0].to(torch::kFloat32) / counted).contiguous();
    const int64_t N = lc.size(0), V = lc.size(1);
    auto dl = torch::empty_like(lc);
    kc::crossEntropyBackward(dtypeOf(lc), lc.data_ptr(), tc.data_ptr<int64_t>(),
                             lse.data_ptr<float>(), g.data_ptr<float>(), 1.0f, dl.data_ptr(), N,
                             V, currentStream(lc));
    return {dl, torch::Tensor()};
  }
};

}  // namespace

bool cudaKernelsBuilt() { return true; }

bool cudaOpsApply(const torch::Tensor& x) {
  return g_enabled && kernels::fusedKernelsEnabled() && x.is_cuda() &&
         x.layout() == torch::kStrided &&
         (x.scalar_type() == torch::kFloat32 || x.scalar_type() == torch::kBFloat16 ||
          x.scalar_type() == torch::kFloat16);
}

torch::Tensor cudaRmsNorm(const torch::Tensor& x, const torch::Tensor& weight, double eps,
                          double scale, std::optional<torch::ScalarType> out) {
  return RmsNormFunction::apply(x, weight, eps, scale,
                                static_cast<int64_t>(out.value_or(torch::kFloat32)));
}

std::pair<torch::Tensor, torch::Tensor> cudaAddRmsNorm(const torch::Tensor& x,
                                                      const torch::Tensor& residual,
                                                      const torch::Tensor& weight, double eps,
                                                      double scale) {
  auto out = AddRmsNormFunction::apply(x, residual, weight, eps, scale);
  return {out[0], out[1]};
}

std::optional<torch::ScalarType> cudaAutocastMatmulDtype() {
  // DEPTHLAB_WITH_CUDA builds use PyTorch's LibTorch 2.x: the per-device autocast API.
  if (!at::autocast::is_autocast_enabled(at::kCUDA)) return std::nullopt;
  const auto t = at::autocast::get_autocast_dtype(at::kCUDA);
  if (t == torch::kBFloat16 || t == torch::kFloat16) return t;
  return std::nullopt;
}

torch::Tensor cudaSwiglu(const torch::Tensor& g, const torch::Tensor& u) {
  return SwigluFunction::apply(g, u);
}

torch::Tensor cudaRopeSplitHeads(const torch::Tensor& x, const torch::Tensor& cos,
                                 const torch::Tensor& sin, int64_t heads) {
  return RopeFunction::apply(x, cos, sin, heads);
}

torch::Tensor cudaCrossEntropy(const torch::Tensor& logits, const torch::Tensor& targets) {
  return CrossEntropyFunction::apply(logits, targets);
}

#endif

}  // namespace depthlab::model

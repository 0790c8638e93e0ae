// See fused_adam.h. The state bookkeeping mirrors torch/csrc/api/src/optim/adam.cpp (and
// adamw.cpp): state created on a parameter's first step, step counter incremented before the
// bias corrections, parameters without a gradient skipped.
#include "train/fused_adam.h"

#include <ATen/Parallel.h>

#include <cmath>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>

#include "kernels/cpu_kernels.h"
#include "train/optimizer_state_key.h"

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define DEPTHLAB_ATEN_FUSED_ADAM 1  // _fused_adam_ and _fused_adamw_ on CUDA and CPU
#include <ATen/ops/_fused_adam.h>
#include <ATen/ops/_fused_adamw.h>
#endif

namespace depthlab::train {

namespace {

bool fusable(const torch::Tensor& t) {
  return t.defined() && t.device().is_cpu() && t.layout() == torch::kStrided &&
         t.scalar_type() == torch::kFloat32 && t.is_contiguous();
}

}  // namespace

template <class Base, class Options, class State>
bool FusedAdamT<Base, Options, State>::canFuse() const {
  if (!kernels::fusedKernelsEnabled()) return false;
  for (const auto& group : this->param_groups_) {
    const auto& o = static_cast<const Options&>(group.options());
    if (o.amsgrad()) return false;
    for (const auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      if (!fusable(p) || !fusable(p.grad())) return false;
      auto it = this->state_.find(optimizerStateKey(p));
      if (it != this->state_.end()) {
        const auto& s = static_cast<const State&>(*it->second);
        if (!fusable(s.exp_avg()) || !fusable(s.exp_avg_sq())) return false;
      }
    }
  }
  return true;
}

// The parameter's state, created with zero moments on its first step (as torch::optim does).
template <class Base, class Options, class State>
State& FusedAdamT<Base, Options, State>::stateOf(const torch::Tensor& p) {
  const auto key = optimizerStateKey(p);
  auto it = this->state_.find(key);
  if (it == this->state_.end()) {
    auto fresh = std::make_unique<State>();
    fresh->step(0);
    fresh->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
    fresh->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
    it = this->state_.emplace(key, std::move(fresh)).first;
  }
  return static_cast<State&>(*it->second);
}

template <class Base, class Options, class State>
bool FusedAdamT<Base, Options, State>::canMultiTensor() const {
#ifdef DEPTHLAB_ATEN_FUSED_ADAM
  if (!kernels::fusedKernelsEnabled()) return false;
  bool any = false;
  std::optional<torch::Device> device;
  for (const auto& group : this->param_groups_) {
    if (static_cast<const Options&>(group.options()).amsgrad()) return false;
    for (const auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      if (p.is_sparse() || p.grad().is_sparse() || !at::isFloatingType(p.scalar_type())) {
        return false;
      }
      if (p.device().is_cpu() && !m_multiTensorOnCpu) return false;
      if (device && *device != p.device()) return false;  // one device per launch
      device = p.device();
      any = true;
    }
  }
  return any;
#else
  return false;
#endif
}

// One ATen multi-tensor launch per (group, step count): parameters, gradients and moments as
// lists. The step counts live in the state objects (for checkpoints); the kernel reads them
// from a float tensor on the device, made here without a host synchronisation.
template <class Base, class Options, class State>
void FusedAdamT<Base, Options, State>::multiTensorStep() {
#ifdef DEPTHLAB_ATEN_FUSED_ADAM
  constexpr bool kDecoupled = std::is_same_v<Options, torch::optim::AdamWOptions>;
  for (auto& group : this->param_groups_) {
    auto& o = static_cast<Options&>(group.options());
    struct Lists { std::vector<torch::Tensor> p, g, m, v; };
    std::map<int64_t, Lists> byStep;  // step count after this update -> its parameters
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& s = stateOf(p);
      s.step(s.step() + 1);
      auto& l = byStep[s.step()];
      l.p.push_back(p);
      l.g.push_back(p.grad());
      l.m.push_back(s.exp_avg());
      l.v.push_back(s.exp_avg_sq());
    }
    const double beta1 = std::get<0>(o.betas()), beta2 = std::get<1>(o.betas());
    for (auto& [step, l] : byStep) {
      auto stepTensor = torch::full({}, static_cast<double>(step),
                                    torch::TensorOptions().dtype(torch::kFloat32).device(l.p[0].device()));
      std::vector<torch::Tensor> steps(l.p.size(), stepTensor);
      if constexpr (kDecoupled) {
        at::_fused_adamw_(l.p, l.g, l.m, l.v, {}, steps, o.lr(), beta1, beta2, o.weight_decay(),
                          o.eps(), /*amsgrad=*/false, /*maximize=*/false);
      } else {
        at::_fused_adam_(l.p, l.g, l.m, l.v, {}, steps, o.lr(), beta1, beta2, o.weight_decay(),
                         o.eps(), /*amsgrad=*/false, /*maximize=*/false);
      }
    }
  }
#endif
}

template <class Base, class Options, class State>
torch::Tensor FusedAdamT<Base, Options, State>::step(
    torch::optim::Optimizer::LossClosure closure) {
  if (canMultiTensor()) {
    torch::NoGradGuard noGrad;
    torch::Tensor loss;
    if (closure) {
      at::AutoGradMode enableGrad(true);
      loss = closure();
    }
    multiTensorStep();
    m_lastPath = "multi-tensor";
    return loss;
  }
  if (!canFuse()) {
    m_lastPath = "torch::optim";
    return Base::step(std::move(closure));
  }
  m_lastPath = "cpu-kernel";
  constexpr bool kDecoupled = std::is_same_v<Options, torch::optim::AdamWOptions>;
  torch::NoGradGuard noGrad;
  torch::Tensor loss;
  if (closure) {
    at::AutoGradMode enableGrad(true);
    loss = closure();
  }
  for (auto& group : this->param_groups_) {
    auto& o = static_cast<Options&>(group.options());
    const double beta1 = std::get<0>(o.betas()), beta2 = std::get<1>(o.betas());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& s = stateOf(p);
      s.step(s.step() + 1);
      const double t = static_cast<double>(s.step());
      kernels::AdamStepConstants k{};
      k.beta1 = static_cast<float>(beta1);
      k.oneMinusBeta1 = static_cast<float>(1.0 - beta1);
      k.beta2 = static_cast<float>(beta2);
      k.oneMinusBeta2 = static_cast<float>(1.0 - beta2);
      k.stepSize = static_cast<float>(o.lr() / (1.0 - std::pow(beta1, t)));
      k.biasCorrection2Sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(beta2, t)));
      k.eps = static_cast<float>(o.eps());
      k.weightDecay = kDecoupled ? 0.0f : static_cast<float>(o.weight_decay());
      k.decoupledDecay = kDecoupled ? static_cast<float>(1.0 - o.lr() * o.weight_decay()) : 1.0f;
      float* pp = p.template data_ptr<float>();
      const float* gp = p.grad().template data_ptr<float>();
      float* mp = s.exp_avg().template data_ptr<float>();
      float* vp = s.exp_avg_sq().template data_ptr<float>();
      at::parallel_for(0, p.numel(), at::internal::GRAIN_SIZE, [&](int64_t b, int64_t e) {
        kernels::adamUpdate(pp, gp, mp, vp, b, e, k);
      });
    }
  }
  return loss;
}

template class FusedAdamT<torch::optim::Adam, torch::optim::AdamOptions,
                          torch::optim::AdamParamState>;
template class FusedAdamT<torch::optim::AdamW, torch::optim::AdamWOptions,
                          torch::optim::AdamWParamState>;

}  // namespace depthlab::train

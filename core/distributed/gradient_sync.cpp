// GradientSync; see gradient_sync.h.
#include "distributed/gradient_sync.h"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <unordered_set>

namespace depthlab::distributed {

struct GradientSync::State {
  struct Slot {
    torch::Tensor param;
    size_t bucket = 0;
    int64_t offset = 0, numel = 0;
    bool got = false;  // its gradient arrived in this armed backward
  };
  struct Bucket {
    torch::Tensor flat;              // (sum of numels) on the parameters' device, their dtype
    std::vector<size_t> slots;
    size_t waiting = 0;              // slots whose gradient has not arrived yet
    bool launched = false;
    DistContext::Pending pending;
  };
  DistContext* dist = nullptr;
  std::vector<Slot> slots;
  std::vector<Bucket> buckets;
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators;  // kept alive: hooks live there
  bool armed = false;
  size_t nextLaunch = 0;
  size_t startedInBackward = 0;  // what finish() found started

  void launchReady() {
    while (nextLaunch < buckets.size() && buckets[nextLaunch].waiting == 0) {
      auto& b = buckets[nextLaunch++];
      b.launched = true;
      b.pending = dist->allreduceSumAsync(b.flat);
    }
  }
  void arrived(size_t slotIndex) {
    if (!armed) return;
    Slot& s = slots[slotIndex];
    if (s.got) return;
    Bucket& b = buckets[s.bucket];
    const torch::Tensor& g = s.param.grad();
    if (!g.defined()) return;
    torch::NoGradGuard ng;
    b.flat.narrow(0, s.offset, s.numel).copy_(g.reshape({-1}));
    s.got = true;
    if (--b.waiting == 0) launchReady();
  }
};

namespace {

// Runs after a parameter's AccumulateGrad node: its .grad holds the update's gradient then.
class AfterAccumulate : public torch::autograd::FunctionPostHook {
 public:
  AfterAccumulate(std::weak_ptr<GradientSync::State> state, size_t slot)
      : m_state(std::move(state)), m_slot(slot) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& outputs,
                                            const torch::autograd::variable_list&) override {
    if (auto s = m_state.lock()) s->arrived(m_slot);
    return outputs;
  }

 private:
  std::weak_ptr<GradientSync::State> m_state;
  size_t m_slot;
};

}  // namespace

GradientSync::GradientSync(DistContext& dist, const std::vector<torch::Tensor>& params,
                           double bucketMB)
    : m_state(std::make_shared<State>()) {
  m_state->dist = &dist;
  std::unordered_set<const void*> seen;
  std::vector<torch::Tensor> order;
  for (auto it = params.rbegin(); it != params.rend(); ++it) {
    if (!it->requires_grad() || !seen.insert(it->unsafeGetTensorImpl()).second) continue;
    order.push_back(*it);
  }
  // Buckets of about bucketMB; the first one small (1 MB), so the first all-reduce starts
  // early in backward, as DDP does.
  const double capBytes = std::max(1e-6, bucketMB) * 1e6;
  double bytes = 0, cap = std::min(capBytes, 1e6);
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < order.size(); ++i) {
    const auto& p = order[i];
    const bool newBucket = groups.empty() || bytes >= cap ||
                           order[groups.back().front()].scalar_type() != p.scalar_type() ||
                           order[groups.back().front()].device() != p.device();
    if (newBucket) {
      if (!groups.empty()) cap = capBytes;
      groups.emplace_back();
      bytes = 0;
    }
    groups.back().push_back(i);
    bytes += static_cast<double>(p.numel()) * static_cast<double>(p.element_size());
  }
  for (const auto& g : groups) {
    State::Bucket b;
    int64_t total = 0;
    for (size_t i : g) {
      State::Slot s;
      s.param = order[i];
      s.bucket = m_state->buckets.size();
      s.offset = total;
      s.numel = order[i].numel();
      total += s.numel;
      b.slots.push_back(m_state->slots.size());
      m_state->slots.push_back(std::move(s));
    }
    b.flat = torch::zeros({total}, order[g.front()].options().requires_grad(false));
    m_state->buckets.push_back(std::move(b));
  }
  for (size_t i = 0; i < m_state->slots.size(); ++i) {
    auto acc = torch::autograd::impl::grad_accumulator(m_state->slots[i].param);
    acc->add_post_hook(std::make_unique<AfterAccumulate>(m_state, i));
    m_state->accumulators.push_back(std::move(acc));
  }
}

// The hooks hold the state weakly: once it is gone they do nothing.
GradientSync::~GradientSync() = default;

size_t GradientSync::bucketCount() const { return m_state->buckets.size(); }

size_t GradientSync::startedDuringBackward() const { return m_state->startedInBackward; }

void GradientSync::arm() {
  reset();
  m_state->armed = true;
}

void GradientSync::reset() {
  auto& s = *m_state;
  s.armed = false;
  s.nextLaunch = 0;
  for (auto& slot : s.slots) slot.got = false;
  for (auto& b : s.buckets) {
    b.waiting = b.slots.size();
    b.launched = false;
    b.pending = DistContext::Pending();
  }
}

void GradientSync::finish() {
  auto& s = *m_state;
  torch::NoGradGuard ng;
  s.startedInBackward = s.nextLaunch;
  // Parameters that got no gradient count as zeros in their bucket (the same ones on every
  // rank: one model, one graph); then the rest of the buckets start, in order.
  for (auto& b : s.buckets) {
    if (b.launched || b.waiting == 0) continue;
    for (size_t i : b.slots) {
      if (!s.slots[i].got) b.flat.narrow(0, s.slots[i].offset, s.slots[i].numel).zero_();
    }
    b.waiting = 0;
  }
  s.launchReady();
  s.armed = false;
  const double inv = 1.0 / static_cast<double>(s.dist->worldSize());
  for (auto& b : s.buckets) {
    b.pending.wait();
    b.flat.mul_(inv);
    for (size_t i : b.slots) {
      auto& slot = s.slots[i];
      if (!slot.got) continue;
      slot.param.mutable_grad().copy_(b.flat.narrow(0, slot.offset, slot.numel).view_as(slot.param));
    }
  }
}

}  // namespace depthlab::distributed

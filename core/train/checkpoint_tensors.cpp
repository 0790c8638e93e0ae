// See checkpoint_tensors.h.
#include "train/checkpoint_tensors.h"

#include "train/checkpoint.h"
#include "train/optimizer_state_key.h"

namespace depthlab::train {

namespace {

// Adam and AdamW keep the same fields under different types; one template serves both.
template <class Options, class State>
struct AdamKind {
  static bool is(torch::optim::Optimizer& o) {
    return !o.param_groups().empty() &&
           dynamic_cast<Options*>(&o.param_groups().front().options()) != nullptr;
  }
};
using AdamTraits = AdamKind<torch::optim::AdamOptions, torch::optim::AdamParamState>;
using AdamWTraits = AdamKind<torch::optim::AdamWOptions, torch::optim::AdamWParamState>;

std::string stateName(size_t g, size_t p, const char* field) {
  return "optim/" + std::to_string(g) + "/" + std::to_string(p) + "/" + field;
}

template <class Options, class State>
OptimizerSnapshot snapshotOf(torch::optim::Optimizer& o, const char* kind) {
  OptimizerSnapshot s;
  s.json = {
      {"kind", kind}, {"groups", nlohmann::json::array()}, {"state", nlohmann::json::array()}};
  auto& groups = o.param_groups();
  for (size_t g = 0; g < groups.size(); ++g) {
    const auto& opt = static_cast<const Options&>(groups[g].options());
    s.json["groups"].push_back({{"lr", opt.lr()},
                                {"beta1", std::get<0>(opt.betas())},
                                {"beta2", std::get<1>(opt.betas())},
                                {"eps", opt.eps()},
                                {"weight_decay", opt.weight_decay()},
                                {"amsgrad", opt.amsgrad()},
                                {"params", groups[g].params().size()}});
    const auto& params = groups[g].params();
    for (size_t p = 0; p < params.size(); ++p) {
      auto it = o.state().find(optimizerStateKey(params[p]));
      if (it == o.state().end()) continue;
      const auto& st = static_cast<const State&>(*it->second);
      const bool max = st.max_exp_avg_sq().defined();
      s.json["state"].push_back({{"group", g}, {"param", p}, {"step", st.step()}, {"max", max}});
      s.tensors.push_back({stateName(g, p, "exp_avg"), st.exp_avg()});
      s.tensors.push_back({stateName(g, p, "exp_avg_sq"), st.exp_avg_sq()});
      if (max) s.tensors.push_back({stateName(g, p, "max_exp_avg_sq"), st.max_exp_avg_sq()});
    }
  }
  return s;
}

template <class Options, class State>
std::vector<NamedTensor> prepare(torch::optim::Optimizer& o, const nlohmann::json& j) {
  auto& groups = o.param_groups();
  const auto& jg = j.at("groups");
  if (jg.size() != groups.size()) {
    throw CheckpointError("the optimizer has " + std::to_string(groups.size()) +
                          " parameter groups, the checkpoint " + std::to_string(jg.size()));
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    if (jg[g].at("params").get<size_t>() != groups[g].params().size()) {
      throw CheckpointError("optimizer group " + std::to_string(g) + " has " +
                            std::to_string(groups[g].params().size()) +
                            " parameters, the checkpoint " + jg[g].at("params").dump());
    }
    auto& opt = static_cast<Options&>(groups[g].options());
    opt.lr(jg[g].at("lr").get<double>())
        .betas({jg[g].at("beta1").get<double>(), jg[g].at("beta2").get<double>()})
        .eps(jg[g].at("eps").get<double>())
        .weight_decay(jg[g].at("weight_decay").get<double>())
        .amsgrad(jg[g].at("amsgrad").get<bool>());
  }
  std::decay_t<decltype(o.state())> kept;
  std::vector<NamedTensor> out;
  for (const auto& e : j.at("state")) {
    const size_t g = e.at("group").get<size_t>(), p = e.at("param").get<size_t>();
    if (g >= groups.size() || p >= groups[g].params().size()) {
      throw CheckpointError("optimizer state for a parameter the model does not have");
    }
    const torch::Tensor& param = groups[g].params()[p];
    const auto key = optimizerStateKey(param);
    auto it = o.state().find(key);
    std::unique_ptr<torch::optim::OptimizerParamState> st;
    if (it != o.state().end()) st = std::move(it->second);
    auto* s = dynamic_cast<State*>(st.get());
    if (!s) st = std::make_unique<State>(), s = static_cast<State*>(st.get());
    s->step(e.at("step").get<int64_t>());
    auto zeroIfUnfit = [&](const torch::Tensor& t) {
      return t.defined() && t.sizes() == param.sizes() && t.device() == param.device()
                 ? t
                 : torch::zeros_like(param, torch::MemoryFormat::Contiguous);
    };
    s->exp_avg(zeroIfUnfit(s->exp_avg()));
    s->exp_avg_sq(zeroIfUnfit(s->exp_avg_sq()));
    s->max_exp_avg_sq(e.at("max").get<bool>() ? zeroIfUnfit(s->max_exp_avg_sq()) : torch::Tensor());
    out.push_back({stateName(g, p, "exp_avg"), s->exp_avg()});
    out.push_back({stateName(g, p, "exp_avg_sq"), s->exp_avg_sq()});
    if (s->max_exp_avg_sq().defined()) {
      out.push_back({stateName(g, p, "max_exp_avg_sq"), s->max_exp_avg_sq()});
    }
    kept[key] = std::move(st);
  }
  o.state() = std::move(kept);
  return out;
}

template <class State>
void createMissing(torch::optim::Optimizer& o) {
  for (auto& group : o.param_groups()) {
    for (const auto& p : group.params()) {
      const auto key = optimizerStateKey(p);
      if (o.state().count(key)) continue;
      auto st = std::make_unique<State>();
      st->step(0);
      st->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Contiguous));
      st->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Contiguous));
      o.state()[key] = std::move(st);
    }
  }
}

[[noreturn]] void unsupported() {
  throw CheckpointError("checkpoints hold the state of Adam and AdamW only");
}

}  // namespace

std::vector<NamedTensor> modelTensors(model::Decoder& model) {
  std::vector<NamedTensor> out;
  for (const auto& p : model->named_parameters(true))
    out.push_back({"model/" + p.key(), p.value()});
  for (const auto& b : model->named_buffers(true)) out.push_back({"model/" + b.key(), b.value()});
  return out;
}

OptimizerSnapshot optimizerSnapshot(torch::optim::Optimizer& optimizer) {
  if (AdamWTraits::is(optimizer)) {
    return snapshotOf<torch::optim::AdamWOptions, torch::optim::AdamWParamState>(optimizer,
                                                                                 "adamw");
  }
  if (AdamTraits::is(optimizer)) {
    return snapshotOf<torch::optim::AdamOptions, torch::optim::AdamParamState>(optimizer, "adam");
  }
  unsupported();
}

std::vector<NamedTensor> prepareOptimizerState(torch::optim::Optimizer& optimizer,
                                               const nlohmann::json& json) {
  try {
    const std::string kind = json.at("kind").get<std::string>();
    const bool w = AdamWTraits::is(optimizer);
    if (!w && !AdamTraits::is(optimizer)) unsupported();
    if (kind != (w ? "adamw" : "adam")) {
      throw CheckpointError("the checkpoint holds " + kind + " state; this run uses " +
                            (w ? "adamw" : "adam"));
    }
    return w ? prepare<torch::optim::AdamWOptions, torch::optim::AdamWParamState>(optimizer, json)
             : prepare<torch::optim::AdamOptions, torch::optim::AdamParamState>(optimizer, json);
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(std::string("unreadable optimizer section (") + e.what() + ")");
  }
}

void createMissingOptimizerState(torch::optim::Optimizer& optimizer) {
  if (AdamWTraits::is(optimizer)) return createMissing<torch::optim::AdamWParamState>(optimizer);
  if (AdamTraits::is(optimizer)) return createMissing<torch::optim::AdamParamState>(optimizer);
  unsupported();
}

}  // namespace depthlab::train

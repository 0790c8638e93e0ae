// Trainer; see trainer.h.
#include "train/trainer.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <thread>
#include <type_traits>

#include "train/fused_adam.h"
#include "train/lr_schedule.h"
#include "train/micro_step.h"
#include "train/row_split.h"
#include "train/row_split_policy.h"

namespace depthlab::train {

namespace {

std::unique_ptr<torch::optim::Optimizer> makeOptimizer(model::Decoder& m,
                                                       const TrainerConfig& c,
                                                       std::vector<double>& peakLr) {
  const auto& o = c.optim;
  std::vector<std::vector<torch::Tensor>> groups = {m->otherParameters()};
  peakLr = {o.lr};
  auto special = m->lnsScaleParameters();
  if (!special.empty()) {
    groups.push_back(special);
    peakLr.push_back(c.options.lnsLearnableLr);
  }
  // Adam and AdamW share options; one builder for both. Both are the fused-step subclasses.
  auto build = [&](auto optionsTag, auto optimizerTag) -> std::unique_ptr<torch::optim::Optimizer> {
    using Options = decltype(optionsTag);
    using Optim = std::remove_pointer_t<decltype(optimizerTag)>;
    std::vector<torch::optim::OptimizerParamGroup> pg;
    for (size_t i = 0; i < groups.size(); ++i) {
      auto opts = std::make_unique<Options>(peakLr[i]);
      opts->betas({o.beta1, o.beta2}).eps(o.eps).weight_decay(o.weightDecay);
      pg.emplace_back(groups[i], std::move(opts));
    }
    return std::make_unique<Optim>(pg, Options(o.lr));
  };
  if (o.optimizer == "adamw") {
    return build(torch::optim::AdamWOptions(o.lr), static_cast<FusedAdamW*>(nullptr));
  }
  return build(torch::optim::AdamOptions(o.lr), static_cast<FusedAdam*>(nullptr));
}

void setGroupLr(torch::optim::OptimizerParamGroup& g, double lr) {
  if (auto* a = dynamic_cast<torch::optim::AdamOptions*>(&g.options())) a->lr(lr);
  else if (auto* w = dynamic_cast<torch::optim::AdamWOptions*>(&g.options())) w->lr(lr);
}

}  // namespace

int defaultThreads(const model::ModelConfig& /*model*/) {
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

torch::Device resolveDevice(const std::string& spec) {
  if (spec == "cpu") return torch::kCPU;
  if (!torch::cuda::is_available()) {
    throw std::runtime_error("device '" + spec + "' requested but this LibTorch sees no CUDA GPU"
                             " (Debian's libtorch is CPU only; build against an upstream CUDA "
                             "LibTorch, see docs/gpu.md)");
  }
  int index = spec.size() > 5 ? std::stoi(spec.substr(5)) : 0;
  if (index >= static_cast<int>(torch::cuda::device_count())) {
    throw std::runtime_error("device '" + spec + "': only " +
                             std::to_string(torch::cuda::device_count()) + " CUDA device(s)");
  }
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
}

std::string describeDevice(torch::Device device) {
  return device.is_cuda() ? "cuda:" + std::to_string(device.index()) : "cpu";
}

Trainer::Trainer(const TrainerConfig& config, const std::string& scheme, torch::Device device)
    : m_config(config), m_scheme(scheme), m_device(device) {
  torch::manual_seed(static_cast<uint64_t>(config.seed));
  m_model = model::Decoder(config.model, config.options, scheme);
  m_model->to(device);
  m_model->train();
  m_optimizer = makeOptimizer(m_model, config, m_groupPeakLr);
  // Which block owns each parameter (-1: embedding, final norm, head), for per-layer norms.
  for (int l = 0; l < m_model->nLayers(); ++l) {
    for (const auto& p : m_model->block(l)->parameters()) {
      m_paramsInOrder.push_back(p);
      m_paramOwner.push_back(l);
    }
  }
  for (auto* m : {static_cast<torch::nn::Module*>(m_model->embed_tokens.get()),
                  static_cast<torch::nn::Module*>(m_model->norm.get()),
                  m_model->lm_head.is_empty()  // no lm_head when the embedding is tied
                      ? nullptr
                      : static_cast<torch::nn::Module*>(m_model->lm_head.get())}) {
    if (!m) continue;
    for (const auto& p : m->parameters()) {
      m_paramsInOrder.push_back(p);
      m_paramOwner.push_back(-1);
    }
  }
  // Whatever else the model registers (DyT's embed_scale, GPT-2's learned positions): every
  // parameter is listed once, so each gets cleared, computed and clipped gradients.
  for (const auto& p : m_model->parameters()) {
    const bool listed = std::any_of(m_paramsInOrder.begin(), m_paramsInOrder.end(),
                                    [&](const torch::Tensor& q) { return q.is_same(p); });
    if (listed) continue;
    m_paramsInOrder.push_back(p);
    m_paramOwner.push_back(-1);
  }
  for (const auto& p : m_paramsInOrder) {
    m_gradientBytes += static_cast<double>(p.numel()) * static_cast<double>(p.element_size());
  }
  setCudaGraphs(CudaGraphStep::enabledByEnvironment());
}

void Trainer::setCudaGraphs(bool on) {
  m_cudaGraphs = on && m_device.is_cuda() && CudaGraphStep::built();
  if (!m_cudaGraphs) m_graphStep.reset();
}

bool Trainer::graphsApply(const std::vector<data::TokenBatch>& micro) const {
  if (!m_cudaGraphs || m_dist || m_sync || micro.empty()) return false;
  for (const auto& b : micro) {
    if (b.batch != micro.front().batch || b.seqLen != micro.front().seqLen) return false;
  }
  return true;
}

bool Trainer::graphedMicroSteps(const std::vector<data::TokenBatch>& micro, bool autocast,
                                torch::Tensor& lossSum, bool& interrupted) {
  if (!m_graphStep) {
    m_graphStep = std::make_unique<CudaGraphStep>(m_model, m_paramsInOrder, m_device);
  }
  const int n = static_cast<int>(micro.size());
  try {
    for (int i = 0; i < n; ++i) {
      if (m_interrupt && m_interrupt->load()) {
        interrupted = true;
        return true;
      }
      auto l = m_graphStep->run(micro[static_cast<size_t>(i)], i, n, autocast);  // () float32
      lossSum = lossSum.defined() ? lossSum + l : l;
    }
    return true;
  } catch (const std::exception& e) {
    m_cudaGraphsError = e.what();
    const std::string why = m_cudaGraphsError.substr(0, m_cudaGraphsError.find('\n'));
    std::cerr << "depthlab: CUDA graphs turned off for this run (" << why
              << "); training goes on without them\n";
    m_cudaGraphs = false;
    m_graphStep.reset();
    dropGradients();
    lossSum = torch::Tensor();
    return false;
  }
}

int Trainer::rowSplitWorkers(const std::vector<data::TokenBatch>& micro) const {
  if (!m_rowSplit || !m_device.is_cpu() || m_dist || micro.empty()) return 1;
  for (const auto& b : micro) {
    if (b.batch != micro.front().batch) return 1;  // the shares are fixed per update
  }
  return train::rowSplitWorkers(torch::get_num_threads(), micro.front().batch, m_gradientBytes);
}

std::pair<torch::Tensor, torch::Tensor> Trainer::toTensors(const data::TokenBatch& b) const {
  const auto [x, y] = batchViews(b);  // (B, T) each
  return {x.to(m_device, /*non_blocking=*/false, /*copy=*/true),
          y.to(m_device, /*non_blocking=*/false, /*copy=*/true)};
}

void Trainer::setDataParallel(distributed::DistContext* dist, double bucketMB) {
  m_sync.reset();
  m_shards.clear();
  m_dist = dist;
  if (!dist) return;
  m_shards = distributed::rankShards(m_config.optim.batchSize, m_config.optim.gradAccum,
                                     dist->rank(), dist->worldSize());  // throws when uneven
  std::vector<torch::Tensor> params;
  for (const auto& p : m_model->parameters()) params.push_back(p);
  m_sync = std::make_unique<distributed::GradientSync>(*dist, params, bucketMB);
}

StepResult Trainer::trainStep(const data::TokenDataset& data, int64_t step) {
  // 1. batches: pure functions of (seed, step, micro-batch); a data-parallel rank takes its share
  std::vector<data::TokenBatch> micro;
  if (m_dist) {
    for (const auto& s : m_shards) {
      micro.push_back(data.trainBatchRows(m_config.seed, step, s.micro, s.rowBegin, s.rowEnd));
    }
    return trainStepOn(micro, step);
  }
  for (int i = 0; i < m_config.optim.gradAccum; ++i) {
    micro.push_back(data.trainBatch(m_config.seed, step, i));
  }
  return trainStepOn(micro, step);
}

StepResult Trainer::trainStepOn(const std::vector<data::TokenBatch>& micro, int64_t step) {
  StepResult r;
  m_model->train();
  // Gradients set to none rather than zeroed: the first backward then hands its fresh
  // gradient buffers over instead of adding them into zeroed ones (a memset and an add pass
  // per parameter saved); later micro-batches accumulate as usual.
  dropGradients();
  const auto nMicro = static_cast<double>(micro.size());
  // The losses stay on the device: the step reads the host once, below.
  torch::Tensor lossSum;  // () float32
  if (!forwardBackwardAll(micro, lossSum)) {
    dropGradients();
    r.interrupted = true;
    return r;
  }
  if (m_sync) averageOverRanks(lossSum);
  // 4. gradient norms, clip, schedule, step
  torch::NoGradGuard ng;
  auto grads = measureGradients(lossSum, nMicro, r);  // the defined gradients, for clipping
  r.finite = std::isfinite(r.loss) && std::isfinite(r.gradNorm);
  if (!r.finite) return r;  // do not step on a non-finite loss; the run loop marks the run diverged
  clipAndStep(grads, step, r);
  return r;
}

void Trainer::dropGradients() {
  for (auto& p : m_paramsInOrder) p.mutable_grad() = torch::Tensor();
}

bool Trainer::forwardBackwardAll(const std::vector<data::TokenBatch>& micro,
                                 torch::Tensor& lossSum) {
  const bool autocast = m_device.is_cuda() && m_config.bf16;
  if (m_sync) m_sync->reset();
  const int workers = rowSplitWorkers(micro);
  if (workers > 1) return rowSplitMicroSteps(micro, workers, lossSum);  // else workers == 1
  // 2.-3. forward and backward replayed from CUDA graphs (cuda_graph_step.h)
  if (graphsApply(micro)) {
    bool interrupted = false;
    const bool graphed = graphedMicroSteps(micro, autocast, lossSum, interrupted);
    if (interrupted) return false;
    if (graphed) return true;
  }
  return eagerMicroSteps(micro, autocast, lossSum);
}

bool Trainer::rowSplitMicroSteps(const std::vector<data::TokenBatch>& micro, int workers,
                                 torch::Tensor& lossSum) {
  // 2.-3. forward and backward over threads, each on its share of the rows (row_split.h)
  std::vector<std::pair<torch::Tensor, torch::Tensor>> tensors;
  for (const auto& b : micro) tensors.push_back(toTensors(b));
  if (!m_team || m_team->size() != workers) {
    m_team.reset();
    // The training thread waits while the team works: its own intra-op thread count never
    // changes, so no update rebuilds ATen's thread pools (worker_team.h).
    m_team = std::make_unique<WorkerTeam>(workers, WorkerTeam::Caller::Waits);
  }
  auto split = rowSplitBackward(m_model, m_paramsInOrder, tensors, *m_team, m_interrupt);
  if (split.interrupted) return false;
  lossSum = split.lossSum;
  return true;
}

bool Trainer::eagerMicroSteps(const std::vector<data::TokenBatch>& micro, bool autocast,
                              torch::Tensor& lossSum) {
  const auto nMicro = static_cast<double>(micro.size());
  for (size_t mi = 0; mi < micro.size(); ++mi) {
    const auto& batch = micro[mi];
    if (!m_dist && m_interrupt && m_interrupt->load()) return false;
    auto [x, y] = toTensors(batch);
    // 2.-3. forward, backward averaged over micro-batches; data-parallel: the last one's
    // gradients are averaged over the ranks as backward produces them (armed before its
    // forward: the hooks fire in backward only)
    if (m_sync && mi + 1 == micro.size()) m_sync->arm();
    auto l = forwardBackward(m_model, x, y, autocast, nMicro);  // () float32
    lossSum = lossSum.defined() ? lossSum + l : l;
  }
  return true;
}

void Trainer::averageOverRanks(torch::Tensor& lossSum) {
  m_sync->finish();  // every bucket, in the same order on every rank; then the loss
  auto global = lossSum.reshape({1}).clone();                    // (1)
  m_dist->allreduceSum(global);
  lossSum = global.reshape({}) / static_cast<double>(m_dist->worldSize());
}

std::vector<torch::Tensor> Trainer::measureGradients(const torch::Tensor& lossSum, double nMicro,
                                                     StepResult& r) {
  std::vector<torch::Tensor> grads;  // the defined gradients, for clipping
  // Per-parameter norms in one fused call; they and the loss come to the host in one copy
  // (the step's only synchronisation), then are summed per block there.
  std::vector<torch::Tensor> all;
  all.reserve(m_paramOwner.size());
  for (const auto& p : m_paramsInOrder) {
    all.push_back(p.grad().defined() ? p.grad() : torch::zeros_like(p));
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  auto norms = torch::stack(at::_foreach_norm(all, 2)).to(torch::kFloat32);     // (P)
  auto host = torch::cat({lossSum.view({1}), norms}).to(torch::kCPU, torch::kFloat64);
  auto acc = host.accessor<double, 1>();                                          // (1 + P)
  r.loss = acc[0] / nMicro;
  std::vector<double> layerSq(static_cast<size_t>(m_model->nLayers()), 0.0);
  double total2 = 0;
  for (size_t i = 0; i < m_paramOwner.size(); ++i) {
    const double n = acc[static_cast<int64_t>(i) + 1];
    total2 += n * n;
    if (m_paramOwner[i] >= 0) layerSq[static_cast<size_t>(m_paramOwner[i])] += n * n;
  }
  r.layerGradNorms.reserve(layerSq.size());
  for (double sq : layerSq) r.layerGradNorms.push_back(static_cast<float>(std::sqrt(sq)));
  r.gradNorm = std::sqrt(total2);
  return grads;
}

void Trainer::clipAndStep(std::vector<torch::Tensor>& grads, int64_t step, StepResult& r) {
  const auto& o = m_config.optim;
  // Clipping as torch::nn::utils::clip_grad_norm_ does it (coefficient max / (norm + 1e-6),
  // capped at 1), from the norm already on the host: no second reduction, no device read.
  if (o.gradClip > 0 && !grads.empty()) {
    const double coef = o.gradClip / (r.gradNorm + 1e-6);
    if (coef < 1.0) at::_foreach_mul_(grads, coef);
  }
  const double mult = lrMultiplier(step, o.warmupSteps,
                                   o.scheduleSteps > 0 ? o.scheduleSteps : o.steps, o.minLrRatio);
  auto& groups = m_optimizer->param_groups();
  for (size_t i = 0; i < groups.size(); ++i) setGroupLr(groups[i], m_groupPeakLr[i] * mult);
  r.lr = m_groupPeakLr[0] * mult;
  m_optimizer->step();
}

double Trainer::evaluate(const data::TokenDataset& data, int nBatches) {
  torch::NoGradGuard ng;
  m_model->eval();
  torch::Tensor sum;  // () on the device; read once
  for (int i = 0; i < nBatches; ++i) {
    auto [x, y] = toTensors(data.valBatch(i, nBatches));
    auto l = m_model->loss(x, y).to(torch::kFloat64);
    sum = sum.defined() ? sum + l : l;
  }
  m_model->train();
  return sum.defined() ? sum.item<double>() / nBatches : 0.0;
}

}  // namespace depthlab::train

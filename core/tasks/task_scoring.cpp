// See task_scoring.h.
#include "tasks/task_scoring.h"

#include <algorithm>
#include <stdexcept>

#include "probes/eval_scope.h"
#include "probes/head_loss.h"

namespace depthlab::tasks {

namespace {

// The log-likelihoods of requests [begin, end) in one pass.
std::vector<double> batchLogLikelihoods(model::Decoder& model,
                                        const std::vector<TokenizedRequest>& requests, size_t begin,
                                        size_t end, const torch::Tensor& weight,
                                        const model::ForwardOptions& opts) {
  const auto device = weight.device();
  int64_t T = 0;
  for (size_t i = begin; i < end; ++i) {
    const auto& r = requests[i];
    T = std::max<int64_t>(T, static_cast<int64_t>(r.context.size() + r.continuation.size()) - 1);
  }
  const int64_t B = static_cast<int64_t>(end - begin);
  auto inputs = torch::zeros({B, T}, torch::kInt64);  // right-padded with id 0
  std::vector<int64_t> rows, targets, owners;         // (M): flat position, token, request
  auto* in = inputs.data_ptr<int64_t>();
  for (int64_t b = 0; b < B; ++b) {
    const auto& r = requests[begin + static_cast<size_t>(b)];
    std::vector<int32_t> all(r.context);
    all.insert(all.end(), r.continuation.begin(), r.continuation.end());
    for (size_t t = 0; t + 1 < all.size(); ++t) in[b * T + static_cast<int64_t>(t)] = all[t];
    const size_t first = r.context.size() - 1;  // the position that predicts continuation[0]
    for (size_t k = 0; k < r.continuation.size(); ++k) {
      rows.push_back(b * T + static_cast<int64_t>(first + k));
      targets.push_back(r.continuation[k]);
      owners.push_back(b);
    }
  }
  const auto ids = torch::TensorOptions(torch::kInt64).device(device);
  const auto hidden =
      probes::hiddenFrom(model, model->embed(inputs.to(device)), 0, opts);  // (B,T,C)
  const auto picked = hidden.reshape({B * T, -1}).index_select(0, torch::tensor(rows, ids));
  auto logits = torch::linear(picked.to(torch::kFloat32), weight);  // (M, V)
  const double cap = model->config().finalSoftcap;
  if (cap > 0) logits = torch::tanh(logits / cap) * cap;
  const auto logp = torch::log_softmax(logits, -1)
                        .gather(1, torch::tensor(targets, ids).unsqueeze(1))
                        .squeeze(1)
                        .to(torch::kFloat64);  // (M)
  const auto sums =
      torch::zeros({B}, logp.options()).index_add_(0, torch::tensor(owners, ids), logp);
  const auto host = sums.to(torch::kCPU).contiguous();
  return std::vector<double>(host.data_ptr<double>(), host.data_ptr<double>() + B);
}

}  // namespace

std::vector<double> logLikelihoods(model::Decoder& model,
                                   const std::vector<TokenizedRequest>& requests, int batch,
                                   const model::ForwardOptions& opts) {
  if (batch < 1) throw std::invalid_argument("the batch must hold at least one request");
  for (const auto& r : requests) {
    if (r.context.empty() || r.continuation.empty()) {
      throw std::invalid_argument(
          "a request needs a context and a continuation of one token or more");
    }
  }
  torch::NoGradGuard ng;
  probes::EvalScope scope(model);
  const auto weight = probes::headWeight(model).to(torch::kFloat32);  // (V, C)
  std::vector<double> out;
  for (size_t i = 0; i < requests.size(); i += static_cast<size_t>(batch)) {
    const size_t end = std::min(requests.size(), i + static_cast<size_t>(batch));
    const auto part = batchLogLikelihoods(model, requests, i, end, weight, opts);
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

}  // namespace depthlab::tasks

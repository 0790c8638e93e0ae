// The tuned lens; see tuned_lens.h.
#include "probes/tuned_lens.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "probes/eval_scope.h"
#include "probes/head_loss.h"
#include "probes/traced_forward.h"
#include "util/content_hash.h"

namespace depthlab::probes {

namespace {

// The model's weights get no gradient while the lens trains; restored on leaving.
class FrozenWeights {
 public:
  explicit FrozenWeights(model::Decoder& m) {
    for (auto& p : m->parameters()) {
      if (p.requires_grad()) {
        p.requires_grad_(false);
        m_thawed.push_back(p);
      }
    }
  }
  ~FrozenWeights() {
    for (auto& p : m_thawed) p.requires_grad_(true);
  }
  FrozenWeights(const FrozenWeights&) = delete;
  FrozenWeights& operator=(const FrozenWeights&) = delete;

 private:
  std::vector<torch::Tensor> m_thawed;
};

// (N, V) logits of the final norm over h (N, C) through the head `weight` (V, C) float32.
torch::Tensor lensLogits(model::Decoder& model, const torch::Tensor& h,
                         const torch::Tensor& weight) {
  auto z = torch::linear(model->norm->forward(h).to(torch::kFloat32), weight);
  const double cap = model->config().finalSoftcap;
  return cap > 0 ? torch::tanh(z / cap) * cap : z;
}

torch::Tensor translate(const TunedLens& lens, size_t l, const torch::Tensor& h) {
  return h + torch::linear(h, lens.weight[l], lens.bias[l]);  // (..., C)
}

std::string fileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read the tuned lens " + path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

TunedLens identityLens(model::Decoder& model) {
  const int64_t C = model->config().dModel;
  const auto f32 =
      torch::TensorOptions(torch::kFloat32).device(model->embed_tokens->weight.device());
  TunedLens lens;
  for (int l = 0; l < model->nLayers(); ++l) {
    lens.weight.push_back(torch::zeros({C, C}, f32));
    lens.bias.push_back(torch::zeros({C}, f32));
  }
  return lens;
}

TunedLens trainTunedLens(model::Decoder& model, const torch::Tensor& text,
                         const TunedLensTraining& o,
                         const std::function<void(int, int, double)>& progress) {
  if (o.steps < 0 || o.rowsPerStep < 1 || text.dim() != 2 || text.size(0) < 1) {
    throw std::invalid_argument("the tuned lens needs steps >= 0 and at least one row of text");
  }
  EvalScope scope(model);
  FrozenWeights frozen(model);
  TunedLens lens = identityLens(model);
  std::vector<torch::Tensor> params;
  for (auto* group : {&lens.weight, &lens.bias}) {
    for (auto& p : *group) params.push_back(p.requires_grad_(true));
  }
  const double lr = o.lrScale * (1 - o.momentum);
  torch::optim::SGD opt(
      params,
      torch::optim::SGDOptions(lr).momentum(o.momentum).nesterov(true).weight_decay(o.weightDecay));
  const auto weight = headWeight(model).detach().to(torch::kFloat32);  // (V, C)
  const int64_t V = weight.size(0), R = text.size(0);
  const int64_t chunk = o.chunkTokens > 0 ? o.chunkTokens : std::max<int64_t>(1, (1 << 24) / V);
  const int64_t rows = std::min<int64_t>(o.rowsPerStep, R);
  for (int step = 0; step < o.steps; ++step) {
    auto index = (torch::arange(rows, torch::kInt64) + static_cast<int64_t>(step) * rows) % R;
    const auto x = text.index_select(0, index.to(text.device()));  // (rows, T)
    model::ForwardTrace trace;
    torch::Tensor logits;  // (N, V) the model's own
    {
      torch::NoGradGuard ng;
      logits = tracedForward(model, x, trace).flatten(0, 1);
    }
    const int64_t N = logits.size(0);
    auto total = torch::zeros({}, weight.options());
    for (size_t l = 0; l < lens.weight.size(); ++l) {
      const auto h = trace.blockInputs[l].detach().flatten(0, 1).to(torch::kFloat32);  // (N, C)
      for (int64_t c0 = 0; c0 < N; c0 += chunk) {
        const int64_t n = std::min(chunk, N - c0);
        torch::Tensor p;  // (n, V) log p, no gradient
        {
          torch::NoGradGuard ng;
          p = torch::log_softmax(logits.narrow(0, c0, n).to(torch::kFloat32), -1);
        }
        const auto q = torch::log_softmax(
            lensLogits(model, translate(lens, l, h.narrow(0, c0, n)), weight), -1);
        auto kl = (p.exp() * (p - q)).sum() / static_cast<double>(N);
        kl.backward();
        total = total + kl.detach();
      }
    }
    torch::nn::utils::clip_grad_norm_(params, o.clipNorm);
    for (auto& group : opt.param_groups()) {  // linear decay to 0, no warm-up
      static_cast<torch::optim::SGDOptions&>(group.options())
          .lr(lr * static_cast<double>(o.steps - step) / o.steps);
    }
    opt.step();
    opt.zero_grad();
    if (progress) progress(step + 1, o.steps, total.item<double>());
  }
  for (auto& p : params) p.requires_grad_(false);
  return lens;
}

LogitLens tunedLensOfTrace(model::Decoder& model, const TunedLens& lens,
                           const model::ForwardTrace& trace, const torch::Tensor& targets) {
  const int L = model->nLayers();
  if (static_cast<int>(lens.weight.size()) != L) {
    throw std::invalid_argument("the tuned lens has a translator per block of another depth");
  }
  torch::NoGradGuard ng;
  return lensOfTrace(model, trace, targets, [&](int l, const torch::Tensor& x) {
    return l < L ? translate(lens, static_cast<size_t>(l), x) : x;  // (B, T, C)
  });
}

std::string saveTunedLens(const TunedLens& lens, const std::string& path) {
  std::vector<torch::Tensor> all;
  for (const auto& w : lens.weight) all.push_back(w.detach().to(torch::kCPU));
  for (const auto& b : lens.bias) all.push_back(b.detach().to(torch::kCPU));
  torch::save(all, path);
  const std::string hash = util::hex64(util::fnv1a(fileBytes(path)));
  std::ofstream out(path + ".fnv1a", std::ios::trunc);
  out << hash << "\n";
  if (!out.flush()) throw std::runtime_error("cannot write " + path + ".fnv1a");
  return hash;
}

TunedLens loadTunedLens(const std::string& path, model::Decoder& model) {
  std::string recorded;
  {
    std::ifstream in(path + ".fnv1a");
    if (!(in >> recorded)) throw std::runtime_error("the tuned lens " + path + " has no hash file");
  }
  if (util::hex64(util::fnv1a(fileBytes(path))) != recorded) {
    throw std::runtime_error("the tuned lens " + path +
                             " does not match its hash (changed on disk)");
  }
  std::vector<torch::Tensor> all;
  torch::load(all, path);
  const int L = model->nLayers();
  const int64_t C = model->config().dModel;
  if (static_cast<int>(all.size()) != 2 * L) {
    throw std::runtime_error("the tuned lens " + path + " is for another depth");
  }
  TunedLens lens;
  const auto device = model->embed_tokens->weight.device();
  for (int l = 0; l < L; ++l) {
    const auto& w = all[static_cast<size_t>(l)];
    const auto& b = all[static_cast<size_t>(L + l)];
    if (w.sizes() != torch::IntArrayRef{C, C} || b.sizes() != torch::IntArrayRef{C}) {
      throw std::runtime_error("the tuned lens " + path + " is for another width");
    }
    lens.weight.push_back(w.to(device, torch::kFloat32));
    lens.bias.push_back(b.to(device, torch::kFloat32));
  }
  return lens;
}

}  // namespace depthlab::probes

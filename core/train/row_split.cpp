// See row_split.h.
#include "train/row_split.h"

#include <algorithm>
#include <numeric>

#include "train/worker_team.h"

namespace depthlab::train {

std::vector<std::pair<int64_t, int64_t>> rowShares(int64_t rows, int workers) {
  const int64_t n = std::max<int64_t>(1, std::min<int64_t>(rows, workers));
  std::vector<std::pair<int64_t, int64_t>> out;
  int64_t begin = 0;
  for (int64_t w = 0; w < n; ++w) {
    const int64_t size = rows / n + (w < rows % n ? 1 : 0);
    out.emplace_back(begin, begin + size);
    begin += size;
  }
  return out;
}

namespace {

// Parameters dealt out over the workers for the final sum, largest first onto the least
// loaded worker (ties to the lower index), so every worker adds about as many numbers.
std::vector<std::vector<size_t>> dealParameters(const std::vector<torch::Tensor>& params,
                                                int workers) {
  std::vector<size_t> order(params.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return params[a].numel() > params[b].numel();
  });
  std::vector<std::vector<size_t>> mine(static_cast<size_t>(workers));
  std::vector<int64_t> load(static_cast<size_t>(workers), 0);
  for (size_t i : order) {
    const auto w = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    mine[w].push_back(i);
    load[w] += params[i].numel();
  }
  return mine;
}

}  // namespace

RowSplitResult rowSplitBackward(model::Decoder& model, const std::vector<torch::Tensor>& params,
                                const std::vector<std::pair<torch::Tensor, torch::Tensor>>& micro,
                                WorkerTeam& team, const std::atomic<bool>* interrupt) {
  RowSplitResult r;
  if (micro.empty()) return r;
  const int64_t rows = micro.front().first.size(0);
  const auto shares = rowShares(rows, team.size());
  const int n = static_cast<int>(shares.size());
  const auto nMicro = static_cast<double>(micro.size());
  std::vector<std::vector<torch::Tensor>> grads(static_cast<size_t>(n));  // (worker, param)
  std::vector<torch::Tensor> losses(static_cast<size_t>(n));              // (worker) ()
  std::atomic<bool> stopped{false};
  std::vector<torch::Tensor> sums(params.size());
  const auto dealt = dealParameters(params, n);
  // Each share's weight in a micro-batch's mean loss: its targets that count over the micro-
  // batch's (pads do not: data::kIgnoreTarget); rows / B without pads.
  std::vector<std::vector<double>> weight(micro.size(), std::vector<double>(static_cast<size_t>(n)));
  for (size_t m = 0; m < micro.size(); ++m) {
    const auto& y = micro[m].second;  // (B, T) on the CPU
    const double all = static_cast<double>(y.ge(0).sum().item<int64_t>());
    for (int w = 0; w < n; ++w) {
      const auto [begin, end] = shares[static_cast<size_t>(w)];
      weight[m][static_cast<size_t>(w)] =
          all > 0 ? static_cast<double>(y.slice(0, begin, end).ge(0).sum().item<int64_t>()) / all : 0;
    }
  }
  team.run([&](int w) {
    if (w >= n) return;  // fewer rows than workers
    const auto [begin, end] = shares[static_cast<size_t>(w)];
    auto& mine = grads[static_cast<size_t>(w)];
    for (size_t m = 0; m < micro.size(); ++m) {
      const auto& [x, y] = micro[m];
      if (stopped.load() || (interrupt && interrupt->load())) {
        stopped = true;
        break;
      }
      const double share = weight[m][static_cast<size_t>(w)];
      if (share == 0) continue;  // only pads in this share: no loss to take the mean of
      auto loss = model->loss(x.slice(0, begin, end), y.slice(0, begin, end));  // () mean
      // allow_unused: a parameter no loss reaches gets an undefined gradient, as with backward
      auto g = torch::autograd::grad({loss * (share / nMicro)}, params, {},
                                     /*retain_graph=*/false, /*create_graph=*/false,
                                     /*allow_unused=*/true);
      if (mine.empty()) {
        mine = std::move(g);
      } else {
        for (size_t i = 0; i < g.size(); ++i) {
          if (!g[i].defined()) continue;
          mine[i] = mine[i].defined() ? mine[i] + g[i] : g[i];  // out of place: g may be a view
        }
      }
      auto l = loss.detach().to(torch::kFloat32) * share;
      auto& lossSum = losses[static_cast<size_t>(w)];
      lossSum = lossSum.defined() ? lossSum + l : l;
    }
  });
  if (stopped.load()) {
    r.interrupted = true;
    return r;
  }
  team.run([&](int w) {  // the shares summed in worker order, each parameter on one worker
    if (w >= n) return;
    torch::NoGradGuard ng;
    for (size_t i : dealt[static_cast<size_t>(w)]) {
      torch::Tensor s;
      for (const auto& g : grads) {
        if (g.empty() || !g[i].defined()) continue;  // empty: a share of pads only
        s = s.defined() ? s + g[i] : g[i];
      }
      if (s.defined() && !s.is_contiguous()) s = s.contiguous();
      sums[i] = s;
    }
  });
  for (size_t i = 0; i < params.size(); ++i) {
    auto p = params[i];
    p.mutable_grad() = sums[i];
  }
  for (const auto& l : losses) {
    if (l.defined()) r.lossSum = r.lossSum.defined() ? r.lossSum + l : l;
  }
  return r;
}

}  // namespace depthlab::train

// See update_gemms.h.
#include "bench/update_gemms.h"

#include <ATen/Context.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <sstream>

#include "train/row_split.h"
#include "train/thread_share.h"
#include "train/worker_team.h"
#include "util/openblas_kernels.h"

namespace depthlab::bench {

std::vector<GemmShape> updateGemmShapes(const experiment::ExperimentConfig& config) {
  const auto& m = config.model;
  const int64_t M = static_cast<int64_t>(config.optim.batchSize) * m.seqLen;
  const int64_t d = m.dModel, hd = m.headDimension();
  const int64_t qkv = (m.nHeads + 2 * static_cast<int64_t>(m.kvHeads())) * hd;
  std::vector<GemmShape> shapes;
  auto add = [&](GemmShape s) {
    for (auto& have : shapes) {
      if (have.m == s.m && have.k == s.k && have.n == s.n) {
        have.count += s.count;
        return;
      }
    }
    shapes.push_back(s);
  };
  const int64_t L = m.nLayers;
  add({M, d, qkv, L});                 // q/k/v, one packed product per block
  add({M, m.nHeads * hd, d, L});       // o
  add({M, d, 2 * int64_t{m.dFF}, L});  // gate/up, one packed product
  add({M, m.dFF, d, L});               // down
  add({M, d, m.vocabSize, 1});         // LM head
  return shapes;
}

std::string gemmShapesJson(const std::vector<GemmShape>& shapes) {
  std::ostringstream s;
  s << '[';
  for (size_t i = 0; i < shapes.size(); ++i) {
    s << (i ? "," : "") << '[' << shapes[i].m << ',' << shapes[i].k << ',' << shapes[i].n << ','
      << shapes[i].count << ']';
  }
  s << ']';
  return s.str();
}

namespace {

// One product's operands: x (M, K), w (N, K), dy (M, N).
struct GemmOperands {
  torch::Tensor x, w, dy;
};

GemmOperands makeOperands(int64_t m, const GemmShape& s) {
  return {torch::randn({m, s.k}), torch::randn({s.n, s.k}), torch::randn({m, s.n})};
}

void runProducts(const GemmOperands& o) {
  torch::mm(o.x, o.w.t());   // forward: y (M, N)
  torch::mm(o.dy, o.w);      // input gradient (M, K)
  torch::mm(o.dy.t(), o.x);  // weight gradient (N, K)
}

// Median milliseconds of `reps` calls of `once` after two that warm up.
double medianMs(int reps, const std::function<void()>& once) {
  std::vector<double> ms;
  for (int r = 0; r < std::max(1, reps) + 2; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    once();
    const double dt =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (r >= 2) ms.push_back(dt);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

double timeUpdateGemmsMs(const std::vector<GemmShape>& shapes, int threads, int reps,
                         GemmThreading threading) {
  torch::NoGradGuard noGrad;
  torch::manual_seed(1);
  threads = std::max(1, threads);
  double total = 0;
  if (threading == GemmThreading::PerOp || threads == 1) {
    train::IntraOpThreads scope(threads);
    for (const auto& s : shapes) {
      const auto o = makeOperands(s.m, s);
      total += medianMs(reps, [&] { runProducts(o); }) * static_cast<double>(s.count);
    }
    return total;
  }
  // As the trainer's row split runs them: a kept team, every worker on its rows, one thread.
  train::WorkerTeam team(threads, train::WorkerTeam::Caller::Waits);
  for (const auto& s : shapes) {
    const auto shares = train::rowShares(s.m, team.size());
    std::vector<GemmOperands> mine(shares.size());
    team.run([&](int w) {  // each worker makes (first touches) its own operands
      if (w < static_cast<int>(shares.size())) {
        mine[static_cast<size_t>(w)] = makeOperands(shares[w].second - shares[w].first, s);
      }
    });
    const double ms = medianMs(reps, [&] {
      team.run([&](int w) {
        if (w < static_cast<int>(mine.size())) runProducts(mine[static_cast<size_t>(w)]);
      });
    });
    total += ms * static_cast<double>(s.count);
  }
  return total;
}

std::string thisBuildBlas() {
  if (at::hasMKL()) return "MKL";
  const auto core = util::openBlasCore();
  return core.empty() ? "ATen's BLAS" : "OpenBLAS " + core;
}

}  // namespace depthlab::bench

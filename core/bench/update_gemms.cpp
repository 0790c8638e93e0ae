// See update_gemms.h.
#include "bench/update_gemms.h"

#include <ATen/Context.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <sstream>

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

double timeUpdateGemmsMs(const std::vector<GemmShape>& shapes, int threads, int reps) {
  torch::NoGradGuard noGrad;
  torch::set_num_threads(std::max(1, threads));
  torch::manual_seed(1);
  double total = 0;
  for (const auto& s : shapes) {
    const auto x = torch::randn({s.m, s.k}), w = torch::randn({s.n, s.k});
    const auto dy = torch::randn({s.m, s.n});
    std::vector<double> ms;
    for (int r = 0; r < std::max(1, reps) + 2; ++r) {  // the first two warm up
      const auto t0 = std::chrono::steady_clock::now();
      torch::mm(x, w.t());   // forward: y (M, N)
      torch::mm(dy, w);      // input gradient (M, K)
      torch::mm(dy.t(), x);  // weight gradient (N, K)
      const double dt =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (r >= 2) ms.push_back(dt);
    }
    std::sort(ms.begin(), ms.end());
    total += ms[ms.size() / 2] * static_cast<double>(s.count);
  }
  return total;
}

std::string thisBuildBlas() {
  if (at::hasMKL()) return "MKL";
  const auto core = util::openBlasCore();
  return core.empty() ? "ATen's BLAS" : "OpenBLAS " + core;
}

}  // namespace depthlab::bench

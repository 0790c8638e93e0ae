// Stores for the daily-use GUI tests: paired groups of fake runs with every probe the views
// draw (losses, tokens/s, per-layer variance spanning decades, pruning, angular distances,
// Block Influence, effectiveness, gradient norms, the (l, n) matrix), default run names.
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

#include "experiment/experiment_config.h"
#include "experiment/group_names.h"
#include "experiment/presets.h"
#include "store/metric_catalogue.h"
#include "store/run_store.h"
#include "support/temp_dir.h"

namespace depthlab::test {

/// A repetitive word text written to dir/corpus.txt; returns its path.
inline std::string writeTextCorpus(const TempDir& dir) {
  std::string text;
  const char* words[] = {"the ", "depth ", "of ", "layers ", "curse ", "norm ", "scaling ", "\n"};
  for (size_t i = 0; text.size() < 60000; ++i) text += words[(i * 7 + i / 5) % 8];
  writeFile(dir.file("corpus.txt"), text);
  return dir.file("corpus.txt");
}

struct FakeRun {
  std::string group = "g", scheme = "pre_ln";
  int64_t seed = 1;
  int layers = 6;
  int steps = 200;  // loss and tokens/s at 0 .. steps-1
  std::vector<int> probeSteps = {0, 50, 100, 150};
  double valLoss = 2.0;
  bool finished = true;
  double lazyThreshold = 0.05;  // probes.lazyThreshold of its config
};

inline int64_t addFakeRun(store::RunStore& s, const FakeRun& f) {
  auto c = *experiment::presetConfig("cpu-demo");
  c.model.nLayers = f.layers;
  c.run.seed = f.seed;
  c.optim.steps = 600;
  c.schemes = {f.scheme};
  c.probes.lazyThreshold = f.lazyThreshold;
  store::NewRun nr;
  nr.name = experiment::defaultRunName(f.group, f.scheme, f.seed);
  nr.groupName = f.group;
  nr.scheme = f.scheme;
  nr.seed = f.seed;
  nr.configJson = experiment::toJson(c).dump();
  const int64_t id = s.createRun(nr);
  const double k = f.scheme == "lns" ? 0.05 : 1.0;
  store::WriteBatch b;
  for (int step = 0; step < f.steps; ++step) {
    b.scalar(step, metrics::kLossTrain, 4.0 - step * 0.01 + 0.05 * std::sin(step + f.seed));
    b.scalar(step, metrics::kTokensPerSecond, 20000);
  }
  b.scalar(f.steps - 1, metrics::kLossVal, f.valLoss);
  const auto L = static_cast<size_t>(f.layers);
  for (int step : f.probeSteps) {
    std::vector<float> var(L), prune(L), adj(L), bi(L), eff(L), grad(L);
    for (size_t l = 0; l < L; ++l) {
      // Variance grows by a factor 10 per layer in Pre-LN: values span decades.
      var[l] = static_cast<float>(0.01 * std::pow(10.0 * k + 1.0, static_cast<double>(l)) *
                                  (1 + step / 100.0));
      // The first block matters most; removing the last one even helps a little (< 0).
      prune[l] =
          static_cast<float>(l == 0 ? 2.0 : (l == L - 1 ? -0.05 : 0.05 * static_cast<double>(l)));
      adj[l] = static_cast<float>(0.1 + 0.02 * static_cast<double>(l));
      bi[l] = static_cast<float>(0.5 - 0.05 * static_cast<double>(l));
      eff[l] = static_cast<float>(0.3 / (1.0 + static_cast<double>(l)));
      grad[l] = static_cast<float>(std::pow(10.0, static_cast<double>(l) * 0.5));
    }
    b.layer(step, metrics::kVariance, var);
    b.layer(step, metrics::kPruneDelta, prune);
    b.layer(step, metrics::kAngularAdjacent, adj);
    b.layer(step, metrics::kBlockInfluence, bi);
    b.layer(step, metrics::kEffectiveness, eff);
    b.layer(step, metrics::kLayerGradNorm, grad);
    std::vector<float> m(L * L, NAN);
    for (size_t l = 0; l < L; ++l)
      for (size_t n = 1; l + n <= L; ++n)
        m[l * L + n - 1] = static_cast<float>(0.05 * static_cast<double>(n) * k + 0.01);
    b.matrix(step, metrics::kAngular, f.layers, f.layers, m);
  }
  // eval --task --prune: accuracy falls to chance as blocks go, the loss rises smoothly.
  if (!f.probeSteps.empty()) {
    const int N = f.layers / 2;
    std::vector<float> acc, accNorm, loss, first;
    for (int row = 0; row < 2; ++row) {
      for (int n = 0; n <= N; ++n) {
        const double kept = std::max(0.0, 1.0 - n / (0.4 * N + 0.3 * N * row));
        acc.push_back(static_cast<float>(0.25 + 0.4 * kept * (k < 1 ? 1.1 : 1.0)));
        accNorm.push_back(acc.back() + 0.02f);
        loss.push_back(static_cast<float>(f.valLoss + 0.3 * n));
        first.push_back(
            static_cast<float>(row == 0 ? std::max(0, f.layers - 1 - n) : f.layers - 1 - n));
      }
    }
    const int64_t last = f.probeSteps.back();
    b.matrix(last, metrics::kTaskAccPruned, 2, N + 1, acc);
    b.matrix(last, metrics::kTaskAccNormPruned, 2, N + 1, accNorm);
    b.matrix(last, metrics::kTaskLossPruned, 2, N + 1, loss);
    b.matrix(last, metrics::kTaskPruneFirst, 2, N + 1, first);
    b.scalar(last, metrics::kTaskChance, 0.25);
  }
  s.write(id, b);
  if (f.finished)
    s.finishRun(id, store::RunStatus::Finished);
  else
    s.markRunning(id);
  return id;
}

}  // namespace depthlab::test

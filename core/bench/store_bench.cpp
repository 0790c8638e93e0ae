// `bench store`: see store_bench.h.
#include "bench/store_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>

#include "store/metric_catalogue.h"
#include "store/run_store.h"

namespace depthlab::bench {

namespace {
double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
void removeDb(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}
}  // namespace

StoreBenchResult runStoreBench(const std::string& path, int layers, int steps, int stepsPerBatch) {
  removeDb(path);
  StoreBenchResult r;
  r.layers = layers;
  r.steps = steps;
  {
    auto store = store::RunStore::open(path);
    store::NewRun nr;
    nr.name = "bench";
    int64_t run = store.createRun(nr);
    std::mt19937 rng(1);
    std::normal_distribution<float> dist(1.0f, 0.5f);
    std::vector<float> v(static_cast<size_t>(layers));
    // Five per-layer metrics per step, as a probe pass writes them.
    const char* kinds[] = {metrics::kVariance, metrics::kAngularAdjacent, metrics::kEffectiveness,
                           metrics::kLayerGradNorm, metrics::kBlockInfluence};
    store::WriteBatch batch;
    size_t values = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (int s = 0; s < steps; ++s) {
      for (const char* m : kinds) {
        for (auto& x : v) x = dist(rng);
        batch.layer(s, m, v);
      }
      if ((s + 1) % stepsPerBatch == 0 || s + 1 == steps) {
        values += batch.valueCount();
        store.write(run, batch);
        batch.clear();
      }
    }
    r.ingestSeconds = secondsSince(t0);
    r.ingestValuesPerSecond = static_cast<double>(values) / r.ingestSeconds;
  }
  {
    auto store = store::RunStore::open(path, store::RunStore::Mode::ReadOnly);
    std::vector<double> times;
    for (int i = 0; i < 7; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      auto series = store.layerSeries(1, metrics::kVariance);
      times.push_back(secondsSince(t0) * 1000.0);
      if (static_cast<int>(series.steps.size()) != steps) {
        std::fprintf(stderr, "bench store: loaded %zu steps, expected %d\n", series.steps.size(),
                     steps);
      }
    }
    std::sort(times.begin(), times.end());
    r.loadMilliseconds = times[times.size() / 2];
    r.loadWorstMilliseconds = times.back();
  }
  std::error_code ec;
  r.fileMegabytes = static_cast<double>(std::filesystem::file_size(path, ec)) / 1e6;
  removeDb(path);
  return r;
}

}  // namespace depthlab::bench

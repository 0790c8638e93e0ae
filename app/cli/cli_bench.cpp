// `depthlab-cli bench store` (more benchmarks join as the lab grows). Prints measurements only.
#include <cstdio>
#include <iostream>
#include <unistd.h>

#include "bench/store_bench.h"
#include "cli_common.h"

namespace depthlab::cli {

void addBenchCommand(CLI::App& app, GlobalOptions& g) {
  auto* bench = app.add_subcommand("bench", "Benchmarks (speed and memory targets)");
  bench->require_subcommand(1);

  static int layers = 24, steps = 20000;
  auto* store = bench->add_subcommand("store", "Run-store ingest rate and series load time");
  store->add_option("--layers", layers, "Layers per vector")->capture_default_str();
  store->add_option("--steps", steps, "Steps in the run")->capture_default_str();
  store->callback([&g] {
    std::string path = "/tmp/depthlab-bench-store-" + std::to_string(getpid()) + ".db";
    auto r = bench::runStoreBench(path, layers, steps);
    if (g.json) {
      std::cout << nlohmann::json{{"layers", r.layers}, {"steps", r.steps},
                                  {"ingest_values_per_s", r.ingestValuesPerSecond},
                                  {"ingest_s", r.ingestSeconds},
                                  {"load_ms_median", r.loadMilliseconds},
                                  {"load_ms_worst", r.loadWorstMilliseconds},
                                  {"file_mb", r.fileMegabytes}}.dump(2)
                << "\n";
      return;
    }
    std::printf("bench store: %d layers x %d steps x 5 per-layer metrics, batches of 100 steps\n",
                r.layers, r.steps);
    std::printf("  ingest   %.2f million values/s  (%.2f s, target >= 2 million/s) %s\n",
                r.ingestValuesPerSecond / 1e6, r.ingestSeconds,
                r.ingestValuesPerSecond >= 2e6 ? "ok" : "MISSED");
    std::printf("  load     %.1f ms median, %.1f ms worst for one metric, all steps "
                "(target <= 50 ms) %s\n",
                r.loadMilliseconds, r.loadWorstMilliseconds,
                r.loadMilliseconds <= 50 ? "ok" : "MISSED");
    std::printf("  file     %.1f MB\n", r.fileMegabytes);
  });
}

}  // namespace depthlab::cli

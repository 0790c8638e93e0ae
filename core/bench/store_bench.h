// The run-store benchmark behind `depthlab-cli bench store`: per-layer ingest rate in batched
// transactions and the time to load one per-layer metric of a long run. Pure measurement.
#pragma once

#include <string>

namespace depthlab::bench {

struct StoreBenchResult {
  int layers = 0;
  int steps = 0;
  double ingestValuesPerSecond = 0;   // per-layer values committed per second
  double ingestSeconds = 0;
  double loadMilliseconds = 0;        // median of several loads of one metric, all steps
  double loadWorstMilliseconds = 0;
  double fileMegabytes = 0;
};

/// Runs the benchmark on a fresh database at `path` (deleted first and after).
StoreBenchResult runStoreBench(const std::string& path, int layers = 24, int steps = 20000,
                               int stepsPerBatch = 100);

}  // namespace depthlab::bench

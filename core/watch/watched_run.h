// WatchedRun: a run of the lab's store fed by a training loop the lab does not own (a user's
// PyTorch code, through the Python binding `depthlab.watch`). It is an ordinary run: its own
// group "watch-<name>", tagged "watched", running with the calling process's pid (a killed
// process's run reads `crashed`, as a lab run's does), the same metric keys as the lab's probes
// (experiment::addForwardRows), so the window, Compare, `report` and `export` read it as they
// read any run. Its config JSON carries a "watch" section (WatchRecord) beside the model's shape.
// The statistics come from the core's probe code (probes::statsOfTrace) over the residual
// streams the caller traced; this class runs no model and holds no weights.
// Writes never throw into the training loop: a locked database or a full disk keeps the rows
// (up to a cap) for the next write and says so in lastError(); training goes on.
// Thread-safety: one WatchedRun per thread (it owns one store connection).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/decoder.h"
#include "probes/probe_config.h"
#include "store/run_store.h"

namespace depthlab::watch {

/// What the store keeps of where a watched run came from (the config's "watch" section).
struct WatchRecord {
  std::string framework;    // "torch 2.11.0"
  std::string modelClass;   // the user's model class, "GPT" or "LlamaForCausalLM"
  std::string layersPath;   // where the blocks were found: "model.layers", "transformer.h"
  std::string device;       // the model's device: "cpu", "cuda:0"
  int64_t probeRows = 0;    // B of the probe batch
  int64_t probeLength = 0;  // T of the probe batch
};

struct WatchSpec {
  std::string name;               // run (and group) name; "" = "watched"
  std::string scheme = "pre_ln";  // what the user says the model is (a scheme of the catalogue)
  int nLayers = 0;                // L, blocks found
  int dModel = 0;                 // C, residual width
  int nHeads = 1;                 // heads when known (C must divide by it)
  int vocabSize = 0;              // V when known (0: unknown)
  int64_t plannedSteps = 0;       // the loop's planned length when known (0: unknown)
  probes::ProbeConfig probes;     // cadences (forwardEvery, angularMatrixEvery, pruningEvery) and
                                  // the lazy/low thresholds
  int64_t seed = 0;
  WatchRecord record;
};

class WatchedRun {
 public:
  /// Opens (creating when needed) the store at `storePath` and creates the run, running. Throws
  /// store::StoreError (the database) or std::invalid_argument (a spec that cannot be a run).
  WatchedRun(const std::string& storePath, const WatchSpec& spec);
  ~WatchedRun();
  WatchedRun(const WatchedRun&) = delete;
  WatchedRun& operator=(const WatchedRun&) = delete;

  int64_t runId() const { return m_runId; }
  const std::string& groupName() const { return m_group; }
  const WatchSpec& spec() const { return m_spec; }

  /// A scalar at `step` ("loss_train", "lr", "loss_val", or any key); kept until the next write.
  void scalar(int64_t step, const std::string& key, double value);
  /// A per-layer series at `step` (L values: "grad_norm", "prune_delta", ...); kept likewise.
  void layer(int64_t step, const std::string& metric, std::vector<float> values);
  /// An event in the run's log (shown by the dashboard and `report`).
  void event(std::optional<int64_t> step, store::EventLevel level, const std::string& message);
  /// The forward statistics of a traced probe pass at `step` (probes::statsOfTrace; the
  /// angular matrix too when `matrix`), with the probe batch's loss, written at once. Throws
  /// std::invalid_argument on a trace of the wrong shape (nothing is written then).
  void forward(int64_t step, const model::ForwardTrace& trace, const torch::Tensor& targets,
               double probeLoss, bool matrix);
  /// Writes what is kept when `force` or `flushSeconds` have passed since the last write; a
  /// heartbeat with it. Returns false when the write failed (see lastError(); rows are kept).
  bool flush(bool force = false);
  /// Whether someone asked the run to stop (the window's Stop button).
  bool stopRequested();
  /// Writes what is kept and ends the run (finished, stopped, diverged, crashed); the config
  /// records `lastStep` as its length when the loop ran longer or shorter than planned.
  void finish(store::RunStatus status, int64_t lastStep);

  /// Why the last write failed ("" when it did not); how many writes failed in all.
  const std::string& lastError() const { return m_lastError; }
  int failedWrites() const { return m_failedWrites; }
  /// Seconds between writes of kept rows (default 2); 0 writes at every call.
  void setFlushSeconds(double s) { m_flushSeconds = s; }

 private:
  bool write();

  store::RunStore m_store;
  WatchSpec m_spec;
  int64_t m_runId = 0;
  std::string m_group;
  store::WriteBatch m_pending;
  double m_lastWrite = 0;
  double m_flushSeconds = 2.0;
  std::string m_lastError;
  int m_failedWrites = 0;
  bool m_finished = false;
};

/// The config JSON of a watched run (ExperimentConfig's shape plus the "watch" section).
std::string watchedConfigJson(const WatchSpec& spec);

}  // namespace depthlab::watch

// Plain value types the run store reads and writes: runs, series points, per-layer vectors,
// matrices, checkpoints and events. No SQL and no tensors here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace depthlab::store {

enum class RunStatus { Queued, Running, Finished, Stopped, Diverged, Crashed };

const char* toString(RunStatus s);
std::optional<RunStatus> runStatusFromString(const std::string& s);
inline bool isActive(RunStatus s) { return s == RunStatus::Queued || s == RunStatus::Running; }

struct NewRun {
  std::string name;
  std::string groupName;        // runs trained together (a paired group), '' for none
  std::string scheme;           // normalization scheme name, e.g. "lns"
  std::string configJson = "{}";
  std::string device;           // "cpu", "cuda:0 (NVIDIA ...)"
  int64_t seed = 0;
  std::string checkpointBase;   // absolute folder its checkpoints go under ('' = the default)
};

struct RunInfo {
  int64_t id = 0;
  std::string name, groupName, scheme;
  RunStatus status = RunStatus::Queued;
  std::string configJson, device;
  int64_t seed = 0;
  double createdAt = 0;               // unix seconds
  std::optional<double> startedAt, finishedAt, heartbeatAt;
  double pausedSeconds = 0;  // stopped or crashed before a resume (not training)
  std::string notes;
  std::vector<std::string> tags;      // sorted
  std::string host;                   // machine of the training process
  int64_t pid = 0;
  bool stopRequested = false;
  int64_t version = 0;                // change counter at the run's last change
  std::string checkpointBase;         // absolute; '' = the default (runs from before v6)
};

/// The seconds a run has trained: from its start to its end (or last heartbeat) less its
/// pauses between stops and resumes; nullopt before it started.
std::optional<double> trainingSeconds(const RunInfo& r);

struct ScalarPoint {
  int64_t step = 0;
  double value = 0;
};

/// What the runs browser shows per run without loading series.
struct RunSummary {
  int64_t lastStep = -1;               // last step with a train loss (-1: none)
  std::optional<double> lossVal;       // latest validation loss
  std::optional<int64_t> lossValStep;
};

/// One per-layer metric over steps: values[i * nLayers + l] is layer l at steps[i].
struct LayerSeries {
  int nLayers = 0;
  std::vector<int64_t> steps;
  std::vector<float> values;
};

/// A matrix for a heatmap, row-major; NaN marks a masked cell.
struct Matrix {
  int64_t step = 0;
  int rows = 0, cols = 0;
  std::vector<float> data;
};

struct CheckpointInfo {
  int64_t step = 0;
  std::string path, checksum;
  double createdAt = 0;
};

enum class EventLevel { Info, Warning, Error };
const char* toString(EventLevel l);

struct EventInfo {
  int64_t id = 0;
  std::optional<int64_t> step;
  double time = 0;
  EventLevel level = EventLevel::Info;
  std::string message;
};

/// Everything one training process learned since its last flush; committed in one transaction.
struct WriteBatch {
  struct Scalar { int64_t step; std::string key; double value; };
  struct Layer { int64_t step; std::string metric; std::vector<float> values; };
  struct Mat { int64_t step; std::string kind; int rows, cols; std::vector<float> data; };
  struct Event { std::optional<int64_t> step; EventLevel level; std::string message; };

  std::vector<Scalar> scalars;
  std::vector<Layer> layers;
  std::vector<Mat> matrices;
  std::vector<Event> events;

  void scalar(int64_t step, std::string key, double value) {
    scalars.push_back({step, std::move(key), value});
  }
  void layer(int64_t step, std::string metric, std::vector<float> values) {
    layers.push_back({step, std::move(metric), std::move(values)});
  }
  void matrix(int64_t step, std::string kind, int rows, int cols, std::vector<float> data) {
    matrices.push_back({step, std::move(kind), rows, cols, std::move(data)});
  }
  void event(std::optional<int64_t> step, EventLevel level, std::string message) {
    events.push_back({step, level, std::move(message)});
  }
  bool empty() const {
    return scalars.empty() && layers.empty() && matrices.empty() && events.empty();
  }
  size_t valueCount() const;
  void clear() { scalars.clear(); layers.clear(); matrices.clear(); events.clear(); }
  /// Moves every row of `other` to the end of this batch; `other` is left empty.
  void append(WriteBatch&& other) {
    for (auto& r : other.scalars) scalars.push_back(std::move(r));
    for (auto& r : other.layers) layers.push_back(std::move(r));
    for (auto& r : other.matrices) matrices.push_back(std::move(r));
    for (auto& r : other.events) events.push_back(std::move(r));
    other.clear();
  }
};

}  // namespace depthlab::store

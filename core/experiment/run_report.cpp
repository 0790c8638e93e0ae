// See run_report.h.
#include "experiment/run_report.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <set>

#include "experiment/depth_scale_check.h"
#include "experiment/run_config.h"
#include "store/metric_catalogue.h"

namespace depthlab::experiment {

double slopeAgainstIndex(const std::vector<double>& y) {
  const double n = static_cast<double>(y.size());
  if (y.size() < 2) return 0;
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    const double x = static_cast<double>(i + 1);
    sx += x;
    sy += y[i];
    sxx += x * x;
    sxy += x * y[i];
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

std::optional<std::pair<int64_t, std::vector<float>>> lastLayerRow(store::RunStore& s, int64_t run,
                                                                   const std::string& metric,
                                                                   int64_t atStep) {
  // One row read (a long run holds thousands), found by an indexed seek.
  const auto step = s.lastLayerStep(run, metric, atStep);
  if (!step) return std::nullopt;
  auto series = s.layerSeries(run, metric, *step, *step);
  if (series.steps.empty() || series.nLayers == 0) return std::nullopt;
  const size_t L = static_cast<size_t>(series.nLayers);
  std::vector<float> v(series.values.end() - static_cast<long>(L), series.values.end());
  return std::make_pair(series.steps.back(), v);
}

namespace {

using Format = ReportValue::Format;

double meanOf(const std::vector<float>& v, size_t from, size_t to) {
  double sum = 0;
  size_t n = 0;
  for (size_t i = from; i < to && i < v.size(); ++i) {
    if (std::isfinite(v[i])) {
      sum += v[i];
      ++n;
    }
  }
  return n ? sum / static_cast<double>(n) : std::nan("");
}

double lastLayer(const std::vector<float>& v) { return v.back(); }
double layerMean(const std::vector<float>& v) { return meanOf(v, 0, v.size()); }
double deepHalfMean(const std::vector<float>& v) { return meanOf(v, v.size() / 2, v.size()); }
double shallowHalfMean(const std::vector<float>& v) { return meanOf(v, 0, v.size() / 2); }
double logSlope(const std::vector<float>& v) {
  std::vector<double> logv;
  for (float x : v) logv.push_back(std::log(std::max(static_cast<double>(x), 1e-30)));
  return slopeAgainstIndex(logv);
}

// How the report sums up a per-layer metric over depth. Which metrics it shows is the
// catalogue's kReport flag; a kReport metric not named here is shown as its mean over layers.
struct LayerSummary {
  const char* metric;
  const char* key;   // the --json name
  const char* what;  // after the catalogue's label
  Format format;
  double (*of)(const std::vector<float>&);
};
const LayerSummary kLayerSummaries[] = {
    {metrics::kVariance, "variance_last", "last layer", Format::General, lastLayer},
    {metrics::kVariance, "variance_mean", "layer mean", Format::General, layerMean},
    {metrics::kVariance, "log_variance_slope", "log-slope over depth", Format::Slope, logSlope},
    {metrics::kAngularAdjacent, "angular_deep_mean", "deep half", Format::General, deepHalfMean},
    {metrics::kPruneDelta, "prune_delta_deep_mean", "deep half", Format::General, deepHalfMean},
    {metrics::kPruneDelta, "prune_delta_shallow_mean", "shallow half", Format::General,
     shallowHalfMean},
};

// Whether a run without `key` is told to measure it: not the training loss (only training
// writes it), perplexity (it follows the validation loss) or what only DyT schemes have.
bool measurable(const std::string& key) {
  return key != metrics::kLossTrain && key != metrics::kPplVal && !metrics::someSchemesOnly(key);
}

ReportValue valueOf(const metrics::Metric& m, std::string key, const char* what, Format format,
                    std::optional<double> value) {
  std::string label(m.label);
  if (what) label += std::string(", ") + what;
  return {std::move(key), std::string(m.key), label, std::string(m.unit), format, value};
}

// The last value of a scalar at or before `atStep` (`latest`: the run's last rows, read once).
std::optional<double> lastScalar(store::RunStore& s, int64_t run, const std::string& key,
                                 int64_t atStep,
                                 const std::map<std::string, store::ScalarPoint>& latest,
                                 int64_t* step = nullptr) {
  std::optional<store::ScalarPoint> p;
  if (atStep == INT64_MAX) {  // the common case: one indexed look for them all
    const auto it = latest.find(key);
    if (it != latest.end()) p = it->second;
  } else {
    const auto series = s.scalarSeries(run, key, INT64_MIN, atStep);
    if (!series.empty()) p = series.back();
  }
  if (p && step) *step = p->step;
  return p ? std::optional<double>(p->value) : std::nullopt;
}

// Steps, the validation loss, and every kReport scalar's last value.
void addScalars(store::RunStore& s, RunReport& r, int64_t atStep) {
  const auto latest =
      atStep == INT64_MAX ? s.latestScalars(r.runId) : std::map<std::string, store::ScalarPoint>{};
  // Train losses are logged at the update's index (0-based), the rest after `step` updates.
  const int64_t trainBound = atStep == INT64_MAX ? atStep : atStep - 1;
  int64_t trainStep = -1;
  lastScalar(s, r.runId, metrics::kLossTrain, trainBound, latest, &trainStep);
  r.steps = trainStep + 1;
  int64_t probeStep = -1;  // a run of no training rows (a checkpoint series): its last probe's
  if (trainStep < 0 && lastScalar(s, r.runId, metrics::kLossProbe, atStep, latest, &probeStep)) {
    r.steps = probeStep;
  }
  r.lossVal = lastScalar(s, r.runId, metrics::kLossVal, atStep, latest);
  // The perplexity right after the validation loss it is computed from (the catalogue's order
  // had put "lazy layers" between them).
  auto keys = metrics::keysFor(metrics::Kind::Scalar, metrics::kReport);
  const auto ppl = std::find(keys.begin(), keys.end(), metrics::kPplVal);
  const auto val = std::find(keys.begin(), keys.end(), metrics::kLossVal);
  if (ppl != keys.end() && val != keys.end() && ppl > val + 1) std::rotate(val + 1, ppl, ppl + 1);
  for (const auto& key : keys) {
    const auto& m = metrics::require(key, metrics::Kind::Scalar);
    auto v = lastScalar(s, r.runId, key, key == metrics::kLossTrain ? trainBound : atStep, latest);
    if (!v && key == metrics::kPplVal && r.lossVal) v = std::exp(std::min(*r.lossVal, 700.0));
    if (!v && measurable(key)) r.missing.push_back(key);
    // A count of layers ("layers") is shown out of the run's L.
    r.values.push_back(
        valueOf(m, key, nullptr, m.unit == "layers" ? Format::LayerCount : Format::General, v));
  }
}

// Every kReport per-layer metric's summaries over its last row.
void addLayerSummaries(store::RunStore& s, RunReport& r, int64_t atStep) {
  for (const auto& key : metrics::keysFor(metrics::Kind::PerLayer, metrics::kReport)) {
    const auto& m = metrics::require(key, metrics::Kind::PerLayer);
    const auto row = lastLayerRow(s, r.runId, key, atStep);
    if (row && !r.probeStep) {
      r.probeStep = row->first;
      r.nLayers = static_cast<int>(row->second.size());
    }
    if (!row && measurable(key)) r.missing.push_back(key);
    bool named = false;
    for (const auto& sum : kLayerSummaries) {
      if (key != sum.metric) continue;
      named = true;
      r.values.push_back(valueOf(m, sum.key, sum.what, sum.format,
                                 row ? std::optional<double>(sum.of(row->second)) : std::nullopt));
    }
    if (!named) {
      r.values.push_back(
          valueOf(m, key + "_mean", "layer mean", Format::General,
                  row ? std::optional<double>(layerMean(row->second)) : std::nullopt));
    }
  }
}

}  // namespace

const ReportValue* RunReport::find(const std::string& key) const {
  for (const auto& v : values) {
    if (v.key == key) return &v;
  }
  return nullptr;
}

RunReport makeRunReport(store::RunStore& s, int64_t runId, int64_t atStep) {
  RunReport r;
  auto run = s.run(runId);
  if (!run) throw store::StoreError("no run with id " + std::to_string(runId));
  r.runId = runId;
  r.name = run->name;
  r.scheme = run->scheme;
  r.status = store::toString(run->status);
  addScalars(s, r, atStep);
  addLayerSummaries(s, r, atStep);
  r.watched = isWatchedRun(*run);
  r.fromTensorBoard = isTensorBoardRun(*run);
  if (auto config = tryConfigOf(*run)) {
    if (auto w = depthScaleWarning(s, *run, *config); !w.empty()) r.warnings.push_back(w);
  }
  return r;
}

std::optional<int64_t> fewestPlannedSteps(store::RunStore& s, const std::vector<int64_t>& runIds) {
  std::vector<store::RunInfo> runs;
  for (int64_t id : runIds) {
    if (auto run = s.run(id)) runs.push_back(std::move(*run));
  }
  return fewestPlannedSteps(runs);
}

std::optional<int64_t> fewestPlannedSteps(const std::vector<store::RunInfo>& runs) {
  std::set<int64_t> planned;
  for (const auto& run : runs) {
    if (isImportedRun(run)) continue;
    if (auto c = tryConfigOf(run)) planned.insert(c->optim.steps);
  }
  if (planned.size() < 2) return std::nullopt;
  return *planned.begin();
}

}  // namespace depthlab::experiment

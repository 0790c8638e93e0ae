// See run_report.h.
#include "experiment/run_report.h"

#include <climits>
#include <cmath>
#include <set>

#include "experiment/run_config.h"
#include "store/metric_catalogue.h"

namespace depthlab::experiment {

double slopeAgainstIndex(const std::vector<double>& y) {
  const double n = static_cast<double>(y.size());
  if (y.size() < 2) return 0;
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    const double x = static_cast<double>(i + 1);
    sx += x; sy += y[i]; sxx += x * x; sxy += x * y[i];
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

double meanOf(const std::vector<float>& v, size_t from, size_t to) {
  double sum = 0;
  size_t n = 0;
  for (size_t i = from; i < to && i < v.size(); ++i) {
    if (std::isfinite(v[i])) { sum += v[i]; ++n; }
  }
  return n ? sum / static_cast<double>(n) : std::nan("");
}

// The last value of a scalar at or before `atStep`.
std::optional<store::ScalarPoint> lastScalar(store::RunStore& s, int64_t run,
                                             const std::string& key, int64_t atStep) {
  if (atStep == INT64_MAX) {  // the common case: one indexed look
    const auto latest = s.latestScalars(run);
    const auto it = latest.find(key);
    return it == latest.end() ? std::nullopt : std::optional<store::ScalarPoint>(it->second);
  }
  const auto series = s.scalarSeries(run, key, INT64_MIN, atStep);
  return series.empty() ? std::nullopt : std::optional<store::ScalarPoint>(series.back());
}

}  // namespace

RunReport makeRunReport(store::RunStore& s, int64_t runId, int64_t atStep) {
  RunReport r;
  auto run = s.run(runId);
  if (!run) throw store::StoreError("no run with id " + std::to_string(runId));
  r.runId = runId;
  r.name = run->name;
  r.scheme = run->scheme;
  r.status = store::toString(run->status);
  // Train losses are logged at the update's index (0-based), the rest after `step` updates.
  const int64_t trainBound = atStep == INT64_MAX ? atStep : atStep - 1;
  if (auto t = lastScalar(s, runId, metrics::kLossTrain, trainBound)) r.steps = t->step + 1;
  if (auto v = lastScalar(s, runId, metrics::kLossVal, atStep)) {
    r.lossVal = v->value;
    r.pplVal = std::exp(std::min(v->value, 700.0));
  } else {
    r.missing.push_back(metrics::kLossVal);
  }
  if (auto lazy = lastScalar(s, runId, metrics::kLazyLayers, atStep)) {
    r.lazyLayers = static_cast<int>(lazy->value);
  } else {
    r.missing.push_back(metrics::kLazyLayers);
  }
  if (auto v = lastLayerRow(s, runId, metrics::kVariance, atStep)) {
    r.probeStep = v->first;
    const auto& var = v->second;
    r.nLayers = static_cast<int>(var.size());
    r.varianceLast = var.back();
    r.varianceMean = meanOf(var, 0, var.size());
    std::vector<double> logv;
    for (float x : var) logv.push_back(std::log(std::max(static_cast<double>(x), 1e-30)));
    r.logVarianceSlope = slopeAgainstIndex(logv);
  } else {
    r.missing.push_back(metrics::kVariance);
  }
  if (auto a = lastLayerRow(s, runId, metrics::kAngularAdjacent, atStep)) {
    r.angularDeepMean = meanOf(a->second, a->second.size() / 2, a->second.size());
  } else {
    r.missing.push_back(metrics::kAngularAdjacent);
  }
  if (auto p = lastLayerRow(s, runId, metrics::kPruneDelta, atStep)) {
    const size_t half = p->second.size() / 2;
    r.pruneShallowMean = meanOf(p->second, 0, half);
    r.pruneDeepMean = meanOf(p->second, half, p->second.size());
  } else {
    r.missing.push_back(metrics::kPruneDelta);
  }
  return r;
}

std::optional<int64_t> fewestPlannedSteps(store::RunStore& s, const std::vector<int64_t>& runIds) {
  std::set<int64_t> planned;
  for (int64_t id : runIds) {
    const auto run = s.run(id);
    if (!run || isImportedRun(*run)) continue;
    if (auto c = tryConfigOf(*run)) planned.insert(c->optim.steps);
  }
  if (planned.size() < 2) return std::nullopt;
  return *planned.begin();
}

}  // namespace depthlab::experiment

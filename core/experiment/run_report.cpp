// See run_report.h.
#include "experiment/run_report.h"

#include <cmath>

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

namespace {

// The last row of a per-layer metric, or nothing.
std::optional<std::pair<int64_t, std::vector<float>>> lastRow(store::RunStore& s, int64_t run,
                                                              const std::string& metric) {
  auto series = s.layerSeries(run, metric);
  if (series.steps.empty() || series.nLayers == 0) return std::nullopt;
  const size_t L = static_cast<size_t>(series.nLayers);
  std::vector<float> v(series.values.end() - static_cast<long>(L), series.values.end());
  return std::make_pair(series.steps.back(), v);
}

double meanOf(const std::vector<float>& v, size_t from, size_t to) {
  double sum = 0;
  size_t n = 0;
  for (size_t i = from; i < to && i < v.size(); ++i) {
    if (std::isfinite(v[i])) { sum += v[i]; ++n; }
  }
  return n ? sum / static_cast<double>(n) : std::nan("");
}

}  // namespace

RunReport makeRunReport(store::RunStore& s, int64_t runId) {
  RunReport r;
  auto run = s.run(runId);
  if (!run) throw store::StoreError("no run with id " + std::to_string(runId));
  r.runId = runId;
  r.name = run->name;
  r.scheme = run->scheme;
  r.status = store::toString(run->status);
  auto latest = s.latestScalars(runId);
  if (auto it = latest.find(metrics::kLossTrain); it != latest.end()) r.steps = it->second.step + 1;
  if (auto it = latest.find(metrics::kLossVal); it != latest.end()) {
    r.lossVal = it->second.value;
    r.pplVal = std::exp(std::min(it->second.value, 700.0));
  } else {
    r.missing.push_back(metrics::kLossVal);
  }
  if (auto it = latest.find(metrics::kLazyLayers); it != latest.end()) {
    r.lazyLayers = static_cast<int>(it->second.value);
  } else {
    r.missing.push_back(metrics::kLazyLayers);
  }
  if (auto v = lastRow(s, runId, metrics::kVariance)) {
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
  if (auto a = lastRow(s, runId, metrics::kAngularAdjacent)) {
    r.angularDeepMean = meanOf(a->second, a->second.size() / 2, a->second.size());
  } else {
    r.missing.push_back(metrics::kAngularAdjacent);
  }
  if (auto p = lastRow(s, runId, metrics::kPruneDelta)) {
    const size_t half = p->second.size() / 2;
    r.pruneShallowMean = meanOf(p->second, 0, half);
    r.pruneDeepMean = meanOf(p->second, half, p->second.size());
  } else {
    r.missing.push_back(metrics::kPruneDelta);
  }
  return r;
}

}  // namespace depthlab::experiment

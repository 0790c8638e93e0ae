// See layer_diagnosis.h.
#include "analysis/layer_diagnosis.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <numeric>

#include "store/metric_catalogue.h"

namespace depthlab::analysis {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Layer values of `s` at the last step <= `step` (NaN x L when none).
std::vector<double> valuesAt(const store::LayerSeries& s, int64_t step, int layers) {
  std::vector<double> out(static_cast<size_t>(layers), kNaN);
  auto it = std::upper_bound(s.steps.begin(), s.steps.end(), step);
  if (it == s.steps.begin() || s.nLayers <= 0) return out;
  const size_t i = static_cast<size_t>(it - s.steps.begin()) - 1;
  for (int l = 0; l < std::min(layers, s.nLayers); ++l) {
    out[static_cast<size_t>(l)] = s.values[i * static_cast<size_t>(s.nLayers) + static_cast<size_t>(l)];
  }
  return out;
}

}  // namespace

std::vector<double> ranks(const std::vector<double>& x) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isfinite(x[i])) idx.push_back(i);
  }
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
  std::vector<double> r(x.size(), kNaN);
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && x[idx[j + 1]] == x[idx[i]]) ++j;
    const double mean = 0.5 * static_cast<double>(i + j) + 1.0;  // ranks i+1 .. j+1
    for (size_t k = i; k <= j; ++k) r[idx[k]] = mean;
    i = j + 1;
  }
  return r;
}

std::optional<double> spearman(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> x, y;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (std::isfinite(a[i]) && std::isfinite(b[i])) {
      x.push_back(a[i]);
      y.push_back(b[i]);
    }
  }
  if (x.size() < 3) return std::nullopt;
  const auto rx = ranks(x), ry = ranks(y);
  const double n = static_cast<double>(rx.size());
  const double mx = std::accumulate(rx.begin(), rx.end(), 0.0) / n;
  const double my = std::accumulate(ry.begin(), ry.end(), 0.0) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < rx.size(); ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  if (sxx <= 0 || syy <= 0) return std::nullopt;
  return sxy / std::sqrt(sxx * syy);
}

bool LayerDiagnosis::withinNoise(int l) const {
  const auto i = static_cast<size_t>(l);
  if (l < 0 || i >= pruning.size() || i >= pruningError.size()) return false;
  return std::isfinite(pruning[i]) && std::isfinite(pruningError[i]) &&
         std::abs(pruning[i]) < 2 * pruningError[i];
}

int LayerDiagnosis::withinNoiseCount() const {
  int n = 0;
  for (int l = 0; l < layers; ++l) n += withinNoise(l);
  return n;
}

const std::vector<std::string>& diagnosisMetrics() {
  static const std::vector<std::string> keys = {metrics::kPruneDelta, metrics::kPruneDeltaError,
                                                metrics::kAngularAdjacent, metrics::kBlockInfluence,
                                                metrics::kEffectiveness};
  return keys;
}

LayerDiagnosis diagnoseLayers(store::RunStore& store, int64_t runId, std::optional<int64_t> atStep) {
  // Only the rows the diagnosis reads (a long run holds thousands of each): the pruning row
  // at the step chosen and each proxy's last row at or before it.
  std::map<std::string, store::LayerSeries> layers;
  const auto step = store.lastLayerStep(runId, metrics::kPruneDelta, atStep.value_or(INT64_MAX));
  for (const auto& k : diagnosisMetrics()) {
    if (!step) break;
    if (const auto s = store.lastLayerStep(runId, k, *step)) {
      layers[k] = store.layerSeries(runId, k, *s, *s);
    }
  }
  auto d = diagnoseLayers(layers, atStep);
  d.runId = runId;
  return d;
}

LayerDiagnosis diagnoseLayers(const std::map<std::string, store::LayerSeries>& layers,
                              std::optional<int64_t> atStep) {
  LayerDiagnosis d;
  static const store::LayerSeries none;
  auto seriesOf = [&](const std::string& k) -> const store::LayerSeries& {
    auto it = layers.find(k);
    return it == layers.end() ? none : it->second;
  };
  const auto& prune = seriesOf(metrics::kPruneDelta);
  int64_t step = -1;
  for (auto s : prune.steps) {
    if (!atStep || s <= *atStep) step = std::max(step, s);
  }
  if (step < 0) return d;
  d.step = step;
  d.layers = prune.nLayers;
  d.pruning = valuesAt(prune, step, d.layers);
  d.pruningRanks = ranks(d.pruning);
  d.pruningError = valuesAt(seriesOf(metrics::kPruneDeltaError), step, d.layers);
  for (const char* key : {metrics::kAngularAdjacent, metrics::kBlockInfluence, metrics::kEffectiveness}) {
    ProxyColumn c;
    c.key = key;
    const auto& row = metrics::require(key, metrics::Kind::PerLayer);
    c.label = std::string(row.label);
    c.values = valuesAt(seriesOf(key), step, d.layers);
    c.ranks = ranks(c.values);
    c.spearmanVsPruning = spearman(c.values, d.pruning);
    d.proxies.push_back(std::move(c));
  }
  d.dropOrder.resize(static_cast<size_t>(d.layers));
  std::iota(d.dropOrder.begin(), d.dropOrder.end(), 0);
  std::stable_sort(d.dropOrder.begin(), d.dropOrder.end(), [&](int a, int b) {
    const double x = d.pruning[static_cast<size_t>(a)], y = d.pruning[static_cast<size_t>(b)];
    if (!std::isfinite(x)) return false;
    if (!std::isfinite(y)) return true;
    return x < y;
  });
  return d;
}

}  // namespace depthlab::analysis

// See depth_scale_check.h.
#include "experiment/depth_scale_check.h"

#include <cmath>
#include <cstdio>
#include <vector>

#include "store/metric_catalogue.h"

namespace depthlab::experiment {

namespace {

constexpr double kNoScaleAbove = -0.5;  // halfway between LNS (-1) and no scale (0)

// Least-squares slope of y against x.
std::optional<double> slope(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = x.size();
  if (n < 3) return std::nullopt;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) mx += x[i] / n, my += y[i] / n;
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < n; ++i) sxy += (x[i] - mx) * (y[i] - my), sxx += (x[i] - mx) * (x[i] - mx);
  if (sxx <= 0) return std::nullopt;
  return sxy / sxx;
}

}  // namespace

std::optional<double> normVarianceDepthSlope(store::RunStore& s, int64_t runId) {
  const auto first = s.layerSeriesSampled(runId, metrics::kNormVarAttn, 2);
  if (first.steps.empty() || first.nLayers < 3) return std::nullopt;
  std::vector<double> x, y;
  for (int l = 0; l < first.nLayers; ++l) {
    const double v = first.values[static_cast<size_t>(l)];
    if (!std::isfinite(v) || v <= 0) continue;
    x.push_back(std::log(static_cast<double>(l + 1)));
    y.push_back(std::log(v));
  }
  return slope(x, y);
}

std::string depthScaleWarning(store::RunStore& s, const store::RunInfo& run,
                              const ExperimentConfig& config) {
  if (run.scheme != "lns" || config.options.lnsPlacement != "after_norm") return "";
  const auto k = normVarianceDepthSlope(s, run.id);
  if (!k || *k <= kNoScaleAbove) return "";
  char text[400];
  std::snprintf(text, sizeof text,
                "run %lld is declared LNS, but its norm outputs' variance does not fall with "
                "depth (log-slope %.2f against log l at its first probe; LNS gives about -1, "
                "Pre-LN about 0): the 1/sqrt(l) scale looks not applied, and the run trains as "
                "Pre-LN",
                static_cast<long long>(run.id), *k);
  return text;
}

}  // namespace depthlab::experiment

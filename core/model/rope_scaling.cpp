// See rope_scaling.h; the formulas follow transformers' modeling_rope_utils.py (5.x).
#include "model/rope_scaling.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace depthlab::model {

namespace {

std::vector<double> plain(int64_t d, double base) {  // f_i = base^(-2i/d), (d/2)
  std::vector<double> f(static_cast<size_t>(d / 2));
  for (size_t i = 0; i < f.size(); ++i) f[i] = std::pow(base, -2.0 * static_cast<double>(i) / d);
  return f;
}

std::vector<double> llama3(const RopeScaling& s, std::vector<double> f) {
  const double L0 = static_cast<double>(s.originalMaxPositions);
  const double lowWavelen = L0 / s.lowFreqFactor, highWavelen = L0 / s.highFreqFactor;
  for (double& x : f) {
    const double wavelen = 2 * M_PI / x;
    if (wavelen < highWavelen) continue;                   // high frequencies: unchanged
    if (wavelen > lowWavelen) { x /= s.factor; continue; }  // low frequencies: interpolated
    const double smooth = (L0 / wavelen - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor);
    x = (1 - smooth) * x / s.factor + smooth * x;
  }
  return f;
}

std::vector<double> yarn(const RopeScaling& s, int64_t d, double base) {
  // The dim whose wavelength makes `rotations` turns in L0 positions.
  auto correctionDim = [&](double rotations) {
    return d * std::log(static_cast<double>(s.originalMaxPositions) / (rotations * 2 * M_PI)) /
           (2 * std::log(base));
  };
  double low = correctionDim(s.betaFast), high = correctionDim(s.betaSlow);
  if (s.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(d - 1));
  if (low == high) high += 0.001;  // as transformers: no zero-width ramp
  std::vector<double> f = plain(d, base);
  for (size_t i = 0; i < f.size(); ++i) {
    const double ramp = std::clamp((static_cast<double>(i) - low) / (high - low), 0.0, 1.0);
    const double extrapolation = 1 - ramp;  // weight of the unscaled frequency
    f[i] = f[i] / s.factor * (1 - extrapolation) + f[i] * extrapolation;
  }
  return f;
}

}  // namespace

double yarnMscale(double factor, double mscale) {
  return factor <= 1 ? 1.0 : 0.1 * mscale * std::log(factor) + 1.0;
}

std::vector<double> ropeInverseFrequencies(const RopeScaling& s, int64_t headDim, double base,
                                           bool longContext) {
  if (s.isDefault()) return plain(headDim, base);
  if (s.type == "linear") {
    auto f = plain(headDim, base);
    for (double& x : f) x /= s.factor;
    return f;
  }
  if (s.type == "llama3") return llama3(s, plain(headDim, base));
  if (s.type == "yarn") return yarn(s, headDim, base);
  if (s.type == "longrope") {
    const auto& ext = longContext ? s.longFactor : s.shortFactor;
    auto f = plain(headDim, base);
    if (ext.size() != f.size()) throw std::invalid_argument("longrope factors: wrong length");
    for (size_t i = 0; i < f.size(); ++i) f[i] /= ext[i];
    return f;
  }
  throw std::invalid_argument("unknown rope type '" + s.type + "'");
}

}  // namespace depthlab::model

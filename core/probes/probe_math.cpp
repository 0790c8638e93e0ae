// See probe_math.h.
#include "probes/probe_math.h"

#include <cmath>
#include <limits>

namespace depthlab::probes {

torch::Tensor tokens(const torch::Tensor& x, bool lastTokenOnly) {
  if (lastTokenOnly) return x.select(1, x.size(1) - 1).to(torch::kFloat32);  // (B, C)
  return x.reshape({-1, x.size(-1)}).to(torch::kFloat32);                    // (B*T, C)
}

torch::Tensor angularDistance(const torch::Tensor& a, const torch::Tensor& b) {
  auto af = a.to(torch::kFloat64), bf = b.to(torch::kFloat64);
  auto na = af.norm(2, -1), nb = bf.norm(2, -1);                 // (N)
  auto dot = (af * bf).sum(-1);                                  // (N)
  auto denom = na * nb;
  auto cos = torch::where(denom > 0, dot / denom.clamp_min(1e-300), torch::zeros_like(dot));
  auto d = torch::acos(cos.clamp(-1.0, 1.0)) / M_PI;             // zero vector: cos 0 -> 0.5
  auto bothZero = (na == 0) & (nb == 0);
  return torch::where(bothZero, torch::zeros_like(d), d).to(torch::kFloat32);
}

double elementVariance(const torch::Tensor& x) {
  return x.to(torch::kFloat64).var(/*unbiased=*/false).item<double>();
}

double layerEffectiveness(const torch::Tensor& hPrev, const torch::Tensor& h) {
  auto hd = h.to(torch::kFloat64);
  const double denom = hd.pow(2).sum().item<double>();
  if (denom == 0) return 0.0;
  return (hd - hPrev.to(torch::kFloat64)).pow(2).sum().item<double>() / denom;
}

double blockInfluence(const torch::Tensor& in, const torch::Tensor& out) {
  auto d = angularDistance(in, out).to(torch::kFloat64);         // arccos(cos)/pi
  return 1.0 - torch::cos(d * M_PI).mean().item<double>();
}

MeanAndError pairedDifference(const double* a, const double* b, int64_t n) {
  MeanAndError r;
  if (n <= 0) return {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
  for (int64_t i = 0; i < n; ++i) r.mean += a[i] - b[i];
  r.mean /= static_cast<double>(n);
  if (n < 2) {
    r.standardError = std::numeric_limits<double>::quiet_NaN();
    return r;
  }
  double squares = 0;  // two passes: the deltas are small differences of similar losses
  for (int64_t i = 0; i < n; ++i) squares += (a[i] - b[i] - r.mean) * (a[i] - b[i] - r.mean);
  r.standardError = std::sqrt(squares / static_cast<double>(n - 1) / static_cast<double>(n));
  return r;
}

}  // namespace depthlab::probes

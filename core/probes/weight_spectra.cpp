// Weight spectra; see weight_spectra.h.
#include "probes/weight_spectra.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace depthlab::probes {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// D of the tail x[i..n) (log values lx) against a power law of exponent alpha from x[i].
double ksDistance(const std::vector<double>& lx, size_t i, double alpha) {
  const size_t n = lx.size(), m = n - i;
  double worst = 0;
  for (size_t j = i; j < n; ++j) {
    const double model = 1.0 - std::exp((1.0 - alpha) * (lx[j] - lx[i]));  // the fit's CDF
    const double empirical = static_cast<double>(j - i) / static_cast<double>(m);
    worst = std::max(worst, std::abs(model - empirical));
  }
  return worst;
}

}  // namespace

PowerLawFit fitPowerLaw(std::vector<double> eigenvalues) {
  eigenvalues.erase(std::remove_if(eigenvalues.begin(), eigenvalues.end(),
                                   [](double x) { return !(x > kSpectrumFloor); }),
                    eigenvalues.end());
  std::sort(eigenvalues.begin(), eigenvalues.end());
  PowerLawFit best;
  best.alpha = best.xmin = best.ksDistance = kNaN;
  const size_t n = eigenvalues.size();
  if (n < static_cast<size_t>(kMinFitEigenvalues)) return best;
  std::vector<double> lx(n);
  for (size_t j = 0; j < n; ++j) lx[j] = std::log(eigenvalues[j]);
  // sum_{j>=i} ln x_j for every i, from the back.
  std::vector<double> tailLogSum(n + 1, 0.0);
  for (size_t j = n; j-- > 0;) tailLogSum[j] = tailLogSum[j + 1] + lx[j];
  double bestD = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i + 1 < n; ++i) {
    const double m = static_cast<double>(n - i);
    const double spread = tailLogSum[i] - m * lx[i];
    const double alpha = spread > 0 ? 1.0 + m / spread : std::numeric_limits<double>::infinity();
    const double d = std::isfinite(alpha) && alpha > 1 ? ksDistance(lx, i, alpha) : 1.0;
    if (d < bestD) {  // strictly: the first of equal distances, as argmin
      bestD = d;
      best.alpha = alpha;
      best.xmin = eigenvalues[i];
      best.ksDistance = d;
      best.tail = static_cast<int>(n - i);
    }
  }
  return best;
}

MatrixSpectrum spectrumOf(const std::string& name, const torch::Tensor& weight) {
  torch::NoGradGuard ng;
  MatrixSpectrum s;
  s.name = name;
  s.rows = static_cast<int>(weight.size(0));
  s.cols = static_cast<int>(weight.size(1));
  auto sv = torch::linalg_svdvals(weight.detach().to(torch::kFloat64)).to(torch::kCPU);  // (K)
  auto eig = (sv * sv).contiguous();
  std::vector<double> values(eig.data_ptr<double>(), eig.data_ptr<double>() + eig.numel());
  const double largest = values.empty() ? 0 : *std::max_element(values.begin(), values.end());
  s.stableRank = largest > 0 ? std::accumulate(values.begin(), values.end(), 0.0) / largest : kNaN;
  s.fit = fitPowerLaw(std::move(values));
  return s;
}

WeightSpectra weightSpectra(model::Decoder& model) {
  WeightSpectra out;
  double alphaSum = 0;
  int fitted = 0;
  for (int l = 0; l < model->nLayers(); ++l) {
    std::vector<MatrixSpectrum> matrices;
    double alpha = 0, rank = 0;
    int nAlpha = 0, nRank = 0;
    for (const auto& p : model->block(l)->named_parameters(/*recurse=*/true)) {
      if (p.value().dim() != 2) continue;  // norms, biases, scalars
      if (std::min(p.value().size(0), p.value().size(1)) < kMinEigenvalues) continue;
      matrices.push_back(spectrumOf(p.key(), p.value()));
      const auto& m = matrices.back();
      if (std::isfinite(m.fit.alpha)) {
        alpha += m.fit.alpha;
        ++nAlpha;
      }
      if (std::isfinite(m.stableRank)) {
        rank += m.stableRank;
        ++nRank;
      }
    }
    out.alpha.push_back(nAlpha ? static_cast<float>(alpha / nAlpha) : NAN);
    out.stableRank.push_back(nRank ? static_cast<float>(rank / nRank) : NAN);
    out.blocks.push_back(std::move(matrices));
    alphaSum += alpha;
    fitted += nAlpha;
  }
  out.meanAlpha = fitted ? alphaSum / fitted : kNaN;
  return out;
}

}  // namespace depthlab::probes

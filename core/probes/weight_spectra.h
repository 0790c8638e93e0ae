// Weight spectra (Martin & Mahoney's heavy-tailed self-regularisation; the WeightWatcher tool):
// for every weight matrix W of every block, the empirical spectral density of W^T W (its
// eigenvalues are W's squared singular values), the power-law exponent alpha of its tail, fitted
// as WeightWatcher fits it by default (its own copy of the `powerlaw` package's method: the
// continuous maximum-likelihood alpha for every candidate x_min among the eigenvalues, x_min
// chosen where the Kolmogorov-Smirnov distance between the tail and the fit is smallest), and
// the stable rank ||W||_F^2 / ||W||_2^2. Data-free: weights only, no forward pass, so it works on
// any import as stored. Summarised per block as the mean over the block's matrices.
// Does not: choose when it runs (experiment/probe_schedule) or store anything.
// Legend: L blocks; a matrix (N, M), K = min(N, M) eigenvalues.
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

#include "model/decoder.h"

namespace depthlab::probes {

/// Eigenvalues at or below this are left out of the fit (WeightWatcher's EVALS_THRESH).
constexpr double kSpectrumFloor = 1e-5;
/// A matrix with fewer eigenvalues (min(N, M)) is no matrix of the spectra (WeightWatcher's
/// min_evals: LNS-learnable's (1, C) gate, say).
constexpr int kMinEigenvalues = 10;
/// Fewer eigenvalues above the floor than this: no alpha (NaN). WeightWatcher fits such small
/// spectra with a bias-corrected variant the lab does not copy.
constexpr int kMinFitEigenvalues = 20;

struct PowerLawFit {
  double alpha = 0;  // NaN with fewer than kMinFitEigenvalues eigenvalues above the floor
  double xmin = 0;   // the chosen start of the tail
  double ksDistance = 0;
  int tail = 0;  // eigenvalues at or above xmin
};

/// The fit of `eigenvalues` (any order; those <= kSpectrumFloor left out), as WeightWatcher's
/// WWFit: sorted x_1 <= ... <= x_n; for each candidate x_min = x_i (i < n), alpha_i = 1 + m /
/// (sum_{j>=i} ln x_j - m ln x_i) with m = n - i + 1 and D_i = max_{j>=i} |1 - (x_j / x_i)^(1 -
/// alpha_i) - (j - i) / m| (1 where alpha_i <= 1); the first i of least D_i.
PowerLawFit fitPowerLaw(std::vector<double> eigenvalues);

struct MatrixSpectrum {
  std::string name;  // the parameter's name in the block ("self_attn.q_proj.weight")
  int rows = 0, cols = 0;
  PowerLawFit fit;
  double stableRank = 0;  // sum of eigenvalues / the largest
};

/// The spectrum of one matrix (any float dtype, any device): singular values in float64.
MatrixSpectrum spectrumOf(const std::string& name, const torch::Tensor& weight);

struct WeightSpectra {
  std::vector<float> alpha;                         // (L) mean alpha over the block's matrices
  std::vector<float> stableRank;                    // (L) mean stable rank over them
  std::vector<std::vector<MatrixSpectrum>> blocks;  // (L) each matrix of each block
  double meanAlpha = 0;                             // over every fitted matrix of every block
};

/// The spectra of every two-dimensional weight of every block (attention and MLP projections;
/// norms and biases are vectors and are left out; the embedding and head are not blocks').
WeightSpectra weightSpectra(model::Decoder& model);

}  // namespace depthlab::probes

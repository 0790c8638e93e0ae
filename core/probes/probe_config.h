// The depth probes' own config: what runs how often, on how many sequences, with which
// thresholds. Owned by probes/; experiment/ composes it into ExperimentConfig and schedules the
// probes by it. Plain data, and the rule that picks the pruning sweeps' rows.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace depthlab::probes {

/// Depth probes (core/probes): what runs how often, in optimizer steps (0 = never).
struct ProbeConfig {
  int probeBatch = 8;             // held-out validation sequences the probes run on
  int forwardEvery = 25;          // variance, adjacent angular distance, BI, effectiveness
  int angularMatrixEvery = 100;   // the full (l, n) angular-distance matrix
  int lensEvery = 100;            // the logit lens (KL to the output, top-1, entropy, CE)
  int pruningEvery = 300;         // single-layer pruning sweep (L+1 evaluations)
  int pruneSequences = 0;         // of the probe batch, evenly spaced, that both pruning sweeps
                                  // evaluate (0 = all); their deltas carry a standard error
  bool blockPruningAtEnd = true;  // Gromov block pruning (l, n) matrix at the end
  int jacobianEvery = 0;          // Jacobian-to-identity estimate (off by default)
  int jacobianSamples = 4;        // random vector-Jacobian products per block
  bool spectraAtEnd = true;       // weight spectra (alpha, stable rank) at the end: no data
  bool lastTokenOnly = false;     // angular distance / BI on the last position only
  bool lastTokenToo = false;      // ... and, besides all tokens, on the last one (*_last keys)
  bool pruneRenumber = false;     // LNS pruning: renumber survivors' 1/sqrt(l)
  bool besideTraining = true;     // CPU: the probes due during training run on a spare core
                                  // over a copy of the weights (same numbers, less waiting)
  double lazyThreshold = 0.05;    // E_l below: lazy
  double lowThreshold = 0.2;      // E_l below: low; at or above: effective
};

/// The rows of a `batch`-row probe batch the pruning sweeps evaluate: `wanted` of them evenly
/// spaced (floor(i * batch / wanted)), every row when `wanted` is 0 or at least `batch`.
inline std::vector<int64_t> pruningRows(int64_t batch, int wanted) {
  const int64_t n = wanted <= 0 ? batch : std::min<int64_t>(wanted, batch);
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < n; ++i) rows.push_back(i * batch / n);
  return rows;
}

}  // namespace depthlab::probes

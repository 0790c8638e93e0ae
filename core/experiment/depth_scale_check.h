// Whether a run's norm outputs show the depth scale its scheme promises. LNS (its after_norm
// placement) multiplies every block's norm outputs by 1/sqrt(l), so at a run's first probed step,
// while the norms' gains are near their initial 1, log Var(norm output) falls against log l with
// a slope near -1; near 0 means the scale is not applied. OLMo-core merged LNS and later found
// (its PR #698) that the scale had silently been a no-op: such a run is declared LNS but trains
// as Pre-LN. Reads the store only; no torch.
#pragma once

#include <optional>
#include <string>

#include "experiment/experiment_config.h"
#include "store/run_store.h"

namespace depthlab::experiment {

/// Slope of log Var(attention-norm output) against log l over the blocks at the run's first
/// probed step; nullopt when the run has no such rows or fewer than 3 usable blocks.
std::optional<double> normVarianceDepthSlope(store::RunStore& store, int64_t runId);

/// A warning when `run` is declared LNS (after_norm) but its slope is above -0.5 (LNS: about
/// -1, Pre-LN: about 0); "" when the scheme promises no such scale or the rows agree with it.
std::string depthScaleWarning(store::RunStore& store, const store::RunInfo& run,
                              const ExperimentConfig& config);

}  // namespace depthlab::experiment

// Choosing the micro-batch on a GPU from its free memory: the largest divisor of the global batch
// (batchSize x gradAccum, which stays what the config says) for which one full update of every
// scheme of the group fits, tried on throw-away trainers before any run exists (the group's
// models live side by side, so all of them are built for each try). The chosen split is written
// into the config, so the store records it and `resume` keeps it. Nothing happens on the CPU or
// when the config does not ask for it (optim.autoMicroBatch).
#pragma once

#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

#include "experiment/experiment_config.h"

namespace depthlab::experiment {

/// The largest divisor b of `globalBatch` with b <= maxMicro for which fits(b) is true, trying
/// from the largest down; throws std::runtime_error when not even 1 fits.
int largestFittingMicroBatch(int globalBatch, int maxMicro, const std::function<bool(int)>& fits);

/// True when one update of a micro-batch of `micro` sequences runs for every scheme at once on
/// `device` without running out of memory (CUDA graphs' captures included) and leaves
/// `headroom` (a fraction) of the device free. Two micro-batches when the config's global
/// batch is larger than `micro`, else one.
bool updateFits(const ExperimentConfig& config, const std::vector<std::string>& schemes,
                torch::Device device, int micro, double headroom = 0.1);

/// Applies the choice to `config` (experiment::applyMicroBatch) when it asks for it and `device` is
/// CUDA; returns a line that says what was chosen ("" when nothing was done).
std::string chooseMicroBatch(ExperimentConfig& config, torch::Device device);

}  // namespace depthlab::experiment

// Small configs and helpers shared by the model / trainer tests.
#pragma once

#include "experiment/experiment_config.h"

namespace depthlab::test {

/// A 4-block, 32-wide model on a 64-token vocabulary with short sequences.
inline experiment::ExperimentConfig smallConfig(int layers = 4) {
  experiment::ExperimentConfig c;
  c.model.vocabSize = 64;
  c.model.dModel = 32;
  c.model.nLayers = layers;
  c.model.nHeads = 4;
  c.model.dFF = 48;
  c.model.seqLen = 16;
  c.optim.lr = 3e-3;
  c.optim.steps = 20;
  c.optim.warmupSteps = 2;
  c.optim.batchSize = 4;
  c.run.evalBatches = 2;
  return c;
}

/// Repeating-pattern tokens (learnable, deterministic).
inline std::vector<int32_t> patternTokens(size_t n, int vocab) {
  std::vector<int32_t> t(n);
  for (size_t i = 0; i < n; ++i) t[i] = static_cast<int32_t>((i * 7 + (i / 13)) % vocab);
  return t;
}

}  // namespace depthlab::test

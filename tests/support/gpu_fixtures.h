// What the GPU tests (tests/gpu, ctest label `gpu`) share: the skip without a CUDA device, the
// device, and the pattern dataset of a small config. Header-only.
#pragma once

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "data/token_dataset.h"
#include "support/model_fixtures.h"

/// Skips the test, saying why, where LibTorch sees no CUDA device (always with Debian's
/// CPU-only libtorch; the torch2 configuration on a machine without a GPU).
#define REQUIRE_CUDA() \
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible to LibTorch"

namespace depthlab::test {

inline const torch::Device kGpu(torch::kCUDA, 0);

/// 20,000 pattern tokens split 90/10, batches of the config's shape.
inline data::TokenDataset gpuPatternData(const experiment::ExperimentConfig& c) {
  return data::TokenDataset(patternTokens(20000, c.model.vocabSize), c.model.vocabSize, 0.1,
                            c.model.seqLen, c.optim.batchSize);
}

}  // namespace depthlab::test

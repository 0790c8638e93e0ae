// The tiny model whose checkpoints seed and exercise fuzz_checkpoint (shared by the fuzzer and
// the seed writer so a seed always loads into the model the fuzzer builds).
#pragma once

#include "experiment/experiment_config.h"

namespace depthlab::fuzz {

inline experiment::ExperimentConfig tinyModelConfig() {
  experiment::ExperimentConfig c;
  c.model.vocabSize = 16;
  c.model.dModel = 8;
  c.model.nLayers = 2;
  c.model.nHeads = 2;
  c.model.dFF = 16;
  c.model.seqLen = 8;
  return c;
}

}  // namespace depthlab::fuzz

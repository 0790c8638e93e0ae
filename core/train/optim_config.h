// The optimizer's and schedule's own config (OptimConfig), and what the Trainer needs to build
// and step one model (TrainerConfig). Owned by train/; experiment/ composes OptimConfig into
// ExperimentConfig and derives a TrainerConfig from it. Plain data, no torch.
#pragma once

#include <cstdint>
#include <string>

#include "model/model_config.h"

namespace depthlab::train {

struct OptimConfig {
  std::string optimizer = "adam"; // adam | adamw
  double lr = 1e-3;               // peak learning rate
  double minLrRatio = 0.1;        // cosine floor as a fraction of peak
  int warmupSteps = 100;
  int steps = 1000;               // optimizer updates
  int scheduleSteps = 0;          // updates the warm-up + cosine span (0 = steps); past them
                                  // the lr stays at its floor (a run trained further than planned)
  int batchSize = 16;             // sequences per micro-batch
  int gradAccum = 1;              // micro-batches per update
  bool autoMicroBatch = false;    // CUDA: choose the micro-batch from free GPU memory, keeping
                                  // batchSize x gradAccum (train/micro_batch.h); recorded after
  double weightDecay = 0.0;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double gradClip = 0.0;          // 0 = off (as in the paper)
};

/// Everything a Trainer is built from: the model, its scheme options, the optimizer, the seed
/// (initialisation and batches) and bf16 autocast (CUDA).
struct TrainerConfig {
  model::ModelConfig model;
  model::SchemeOptions options;
  OptimConfig optim;
  int64_t seed = 1;
  bool bf16 = false;
};

}  // namespace depthlab::train

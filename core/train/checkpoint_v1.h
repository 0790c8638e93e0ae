// Reading checkpoints of format version 1 (DepthLab before streaming checkpoints): one FNV-1a
// checksum at the end, the model and optimizer as LibTorch archives. Such a file is read whole
// into memory (it was written that way); new files are version 2 (checkpoint_stream.h).
#pragma once

#include <torch/torch.h>

#include <string>

#include "model/decoder.h"
#include "train/checkpoint.h"

namespace depthlab::train::v1 {

/// Reads and checks the whole file (checksum included); the meta only.
CheckpointMeta readMeta(const std::string& path);
/// Loads weights (and optimizer state when given).
CheckpointMeta load(const std::string& path, model::Decoder& model,
                    torch::optim::Optimizer* optimizer, torch::Device device);

}  // namespace depthlab::train::v1

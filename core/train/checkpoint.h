// Checkpoint files: model and optimizer state, the step and the run's config, in one file
// that starts with a magic number and a format version and ends with a checksum. Written
// atomically (temp file + rename). Batches are pure functions of (seed, step), so the step is
// all the data-order state a resume needs.
#pragma once

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "model/decoder.h"

namespace depthlab::train {

class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CheckpointMeta {
  int64_t step = 0;            // updates done
  std::string scheme;
  nlohmann::json config;       // ExperimentConfig JSON
  int64_t runId = 0;
  std::string storeId;         // the database the run belongs to ("" in files before it)
  std::string configHash;      // modelConfigHash() of `config`
  std::string checksum;        // read back: the file's own checksum (hex), as saveCheckpoint returns
};

/// Hex FNV-1a of the model-shaping part of an ExperimentConfig JSON (model and options): two
/// configs with the same hash build models with the same parameters.
std::string modelConfigHash(const nlohmann::json& config);

/// What a checkpoint must be to belong to a run; empty strings are not checked.
struct CheckpointOwner {
  int64_t runId = 0;
  std::string scheme, storeId, configHash;
  std::string checksum;        // what the store recorded when the file was written
};

/// Reads and checks the whole file (format, checksum) and that it belongs to `owner`; throws
/// CheckpointError naming the file, the expected owner and what the file says otherwise.
CheckpointMeta verifyCheckpoint(const std::string& path, const CheckpointOwner& owner);

/// Saves atomically; returns the file's checksum (hex FNV-1a 64 of its payload).
std::string saveCheckpoint(const std::string& path, model::Decoder& model,
                           torch::optim::Optimizer* optimizer, const CheckpointMeta& meta);
/// Reads only the header (meta); throws CheckpointError on a bad file.
CheckpointMeta readCheckpointMeta(const std::string& path);
/// Loads weights (and optimizer state when given) into already-built objects.
CheckpointMeta loadCheckpoint(const std::string& path, model::Decoder& model,
                              torch::optim::Optimizer* optimizer, torch::Device device);

}  // namespace depthlab::train

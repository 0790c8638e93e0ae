// Checkpoint files: model and optimizer state, the step and the run's config, in one file
// that starts with a magic number and a format version and ends with a checksum (XXH3-64 since
// version 2, see checkpoint_stream.h; version 1 files still load). Streamed: written, verified
// and loaded in bounded memory (a 64 MiB buffer beyond the model and optimizer themselves),
// fsynced and renamed into place. Batches are pure functions of (seed, step), so the step is all
// the data-order state a resume needs.
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

/// Checks that the file belongs to `owner` from its header and stored checksum alone (a
/// version-2 file is not hashed: loadCheckpoint verifies while it loads); throws CheckpointError
/// naming the file, the expected owner and what the file says otherwise.
CheckpointMeta checkCheckpointOwner(const std::string& path, const CheckpointOwner& owner);
/// checkCheckpointOwner, then reads the whole file to verify its checksum.
CheckpointMeta verifyCheckpoint(const std::string& path, const CheckpointOwner& owner);

/// Saves atomically (temporary file, fsync, rename); returns the file's checksum (hex XXH3-64).
/// A failed write (a full disk) leaves every existing file as it was and throws CheckpointError.
std::string saveCheckpoint(const std::string& path, model::Decoder& model,
                           torch::optim::Optimizer* optimizer, const CheckpointMeta& meta);
/// Reads only the header (meta, and the checksum the file ends with); throws CheckpointError on
/// a bad file. Does not verify the checksum (version-1 files, read whole, are verified).
CheckpointMeta readCheckpointMeta(const std::string& path);
/// Loads weights (and optimizer state when given) into already-built objects, verifying the
/// checksum on the way (one pass). A file that does not fit is refused before anything is
/// changed; a corrupt one is found at its end: the objects then hold partly loaded values and
/// must be loaded again (an older checkpoint) or dropped.
CheckpointMeta loadCheckpoint(const std::string& path, model::Decoder& model,
                              torch::optim::Optimizer* optimizer, torch::Device device);

/// The meta fields of a header (both versions); throws CheckpointError naming `path`.
CheckpointMeta checkpointMetaFromJson(const nlohmann::json& j, const std::string& path);

}  // namespace depthlab::train

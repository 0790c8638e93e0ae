// Finding the checkpoints of a series and the step of each: a folder of checkpoint folders, or
// the checkpoint folders themselves, as training scripts and model hubs name them. The step comes
// from the folder's name (`step1000`, `checkpoint-500` as Trainer writes them, OLMo's
// `stage1-step1000-tokens4B`, Megatron's `iter_0001000`), else from Trainer's
// `trainer_state.json` (global_step), else from the `depthlab` record of a folder that
// `depthlab-cli export-hf` wrote; tokens where the name (`tokens4B`) or trainer_state.json
// (num_input_tokens_seen) tell them. Reads config.json and trainer_state.json only; no weights.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace depthlab::hf {

struct SeriesCheckpoint {
  std::string dir;  // absolute
  int64_t step = 0;
  std::optional<int64_t> tokens;  // training tokens seen at that step, where known
  std::string stepFrom;           // "the folder's name", "trainer_state.json", ...
};

/// The step (and tokens) a checkpoint folder's name says: nullopt when it names none.
/// `tokens4B` = 4e9, `tokens4194304` = 4194304 (K, M, B, T: thousands to trillions).
std::optional<SeriesCheckpoint> stepFromName(const std::string& folderName);

/// One checkpoint folder (holding config.json) described; throws HfModelError when its step
/// cannot be told, saying how to name it.
SeriesCheckpoint describeCheckpoint(const std::string& dir);

/// The checkpoints of `paths`: each a checkpoint folder, or a folder whose subfolders holding a
/// config.json are (other subfolders are passed over). Sorted by step; throws HfModelError on no
/// checkpoint, or on two of one step (naming both).
std::vector<SeriesCheckpoint> findSeries(const std::vector<std::string>& paths);

}  // namespace depthlab::hf

// Importing a Hugging Face model folder as an "imported" run: the store keeps the architecture,
// the size, the source folder and a checksum of every file it read, never the weights; the
// decoder is built later over the memory-mapped safetensors, in the weights' own dtype.
// An imported run is a finished run in its own group "hf-<name>", tagged "imported", whose config
// JSON has an "import" section (ImportRecord) beside the usual model config (scheme pre_ln).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hf/hf_config.h"
#include "hf/hf_weight_map.h"
#include "model/decoder.h"
#include "store/run_store.h"

namespace depthlab::hf {

struct ImportedFile {
  std::string name;  // relative to the source folder
  uint64_t bytes = 0;
  std::string checksum;  // hex util::hashFile (StreamHash) of the whole file
  int64_t mtimeNs = 0;   // its modification time then (0: imports from before it was
                         // recorded); a later time makes loading hash the file again
};

struct ImportRecord {
  std::string source;        // absolute path of the model folder
  std::string architecture;  // LlamaForCausalLM, ...
  std::string dtype;         // of the weights: float32, bfloat16, float16
  int64_t parameters = 0;
  int64_t maxPositions = 0;
  std::optional<int64_t> slidingWindow;
  std::vector<ImportedFile> files;
};

nlohmann::json toJson(const ImportRecord& r);
/// The import section of a run, nullopt for a trained run; throws HfModelError when broken.
std::optional<ImportRecord> importRecordOf(const store::RunInfo& run);

struct ImportResult {
  int64_t runId = 0;
  ImportRecord record;
  HfModelConfig config;
  double seconds = 0;
};

/// Validates `dir` (config, every tensor's presence, shape and dtype; only the safetensors
/// headers are read) and describes it: its files with their sizes and content hashes. `config`
/// gets the folder's config.json. Throws HfModelError / io::SafetensorsError.
ImportRecord describeHfFolder(const std::string& dir, HfModelConfig& config);

/// Validates `dir` (describeHfFolder) and creates the run.
/// `name` empty: the folder's name. Throws HfModelError / io::SafetensorsError; writes nothing
/// then.
ImportResult importHfModel(store::RunStore& store, const std::string& dir, const std::string& name);

/// The decoder of an imported run over its mapped weights (on CUDA: copied there), with a
/// context of `seqLen` tokens; checks the files still have the sizes recorded at import.
/// `model` is the run's stored config; what a run's config JSON does not keep (rope scaling,
/// q/k norms, where the norms sit, GPT-2's and GPT-NeoX's biases, learned positions, rotary
/// share, ungated MLP and parallel blocks) comes from the folder's config.json, read again here.
model::Decoder loadImportedDecoder(const ImportRecord& record, const model::ModelConfig& model,
                                   int seqLen, torch::Device device);

}  // namespace depthlab::hf

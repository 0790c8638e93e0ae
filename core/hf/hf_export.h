// Exporting a trained run's newest verified checkpoint as a Hugging Face LlamaForCausalLM folder:
// config.json, model.safetensors (float32) and the run's tokenizer (a byte-level tokenizer.json,
// or the SentencePiece tokenizer.model). Pre-LN exports as is; LNS exactly too, its 1/sqrt(l)
// folded into both norm weights of block l (the final norm stays unscaled). Schemes and options
// that Llama cannot express are refused with the reason, before anything is written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/run_store.h"

namespace depthlab::hf {

struct HfExportResult {
  std::string dir;
  std::vector<std::string> files;  // written, relative to dir
  int64_t step = 0;                // of the checkpoint exported
  std::string gapNote;             // experiment::checkpointGapNote: the run trained past it
  std::string scheme, tokenizer;   // tokenizer: "byte-level tokenizer.json", "tokenizer.model", ""
};

/// Writes into `outDir` (created; it must not exist or be empty). Throws HfModelError.
HfExportResult exportRunToHf(store::RunStore& store, int64_t runId, const std::string& outDir);

/// The byte-level tokenizer.json (Hugging Face tokenizers) whose ids are the byte values 0-255.
std::string byteLevelTokenizerJson();

}  // namespace depthlab::hf

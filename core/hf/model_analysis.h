// Running DepthLab's probes and evaluations on a stored model over given text: the depth probes
// on an imported Hugging Face model (`depthlab-cli analyze --run ID --corpus FILE`), and the
// mean next-token loss of any run, trained or imported (`depthlab-cli eval`). The model of a
// trained run is its newest verified checkpoint; an imported one is built over its mapped
// weights. Results go to the store like a training run's (analysis at step 0).
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "hf/hf_import.h"
#include "model/decoder.h"
#include "store/run_store.h"

namespace depthlab::hf {

/// Where the tokens come from: a text file (tokenized by the run's own tokenizer) or a file of
/// token ids (whitespace-separated, one sequence per line). Exactly one is set.
struct TextInput {
  std::string corpus;
  std::string tokensFile;
  /// Neither: a trained run's own validation split (the held-out tail of its corpus, as its
  /// training split it), whole or its first `maxTokens` (0 = all); an imported model has none.
  bool validationSplit = false;
  uint64_t maxTokens = 0;
};

struct ModelAnalysisOptions {
  TextInput text;
  int sequences = 2;             // probe sequences, evenly spaced over the text
  int seqLen = 0;                // tokens per sequence; 0 = 128, or less when the model's
                                 // positions or attention window are fewer
  std::set<std::string> probes;  // experiment::kProbeNames (+ "tuned_lens"); empty = all of them
  int tunedLensSteps = 250;      // the tuned lens: training steps, and the windows of the text
  int tunedLensSequences = 64;   // it trains on (evenly spaced; 8 a step)
  std::string device = "cpu";
  int threads = 0;                                   // CPU threads; 0 = every core
  std::function<void(const std::string&)> progress;  // "block_pruning  40% ... ETA 1m 20s"
};

struct ModelAnalysisResult {
  int64_t tokens = 0;            // sequences x seqLen
  int sequences = 0;             // probed (a tokens file may hold fewer long-enough lines)
  bool replacedEarlier = false;  // an earlier analysis's rows were overwritten
  std::string tokensHow;
  double seconds = 0;
  size_t valuesWritten = 0;
};

/// The probes on imported run `runId` (angular distance and Block Influence on all tokens and on
/// the last token of each sequence); throws HfModelError (not an imported run, no tokenizer,
/// too little text, ...) before writing anything.
ModelAnalysisResult analyzeImportedRun(store::RunStore& store, int64_t runId,
                                       const ModelAnalysisOptions& options);

/// The probe windows of an imported model's text: inputs and targets (B, T) int64 on the
/// model's device, B = sequences probed, T = seqLen; `how` says which tokenizer and lines.
struct ImportedProbeBatch {
  torch::Tensor inputs, targets;
  int sequences = 0, seqLen = 0;
  std::string how;
};

/// `options.sequences` windows of `seqLen` tokens of `options.text`, tokenized by the imported
/// model's own tokenizer (or a tokens file); throws HfModelError.
ImportedProbeBatch importedProbeBatch(const ImportRecord& record, const model::ModelConfig& model,
                                      const ModelAnalysisOptions& options, int seqLen,
                                      torch::Device device);
/// The probe families `which` (empty: all) of `decoder` on `batch`, as rows at `step` appended
/// to `out`; `progress` (may be empty) hears the family, count and ETA. Returns the values added.
size_t probeImportedDecoder(model::Decoder& decoder, const model::ModelConfig& model,
                            const ImportedProbeBatch& batch, int64_t step,
                            std::set<std::string> which,
                            const std::function<void(const std::string&)>& progress,
                            store::WriteBatch& out);
/// The probe length of an imported model when none is asked: 128, fewer when its positions or
/// attention window are fewer.
int defaultProbeLength(const ImportRecord& record);
/// `threads` CPU threads for the probes, 0 = every core; throws HfModelError when negative.
void useThreads(int threads);

struct EvalOptions {
  TextInput text;
  int seqLen = 0;  // context per window; 0 = the run's training length (imported: 1024,
                   // or its positions or attention window when fewer; said in the result)
  int batch = 8;   // windows per forward pass
  std::string device = "cpu";
  int threads = 0;  // CPU threads; 0 = every core
};

struct EvalResult {
  double loss = 0, perplexity = 0;
  int64_t predictedTokens = 0, sequences = 0;
  int context = 0;                   // tokens a window holds (the longer sequences are cut)
  int64_t windows = 0;               // the windows the sequences were cut into
  std::string contextWhy;            // why that context: asked, the run's, the model's limit
  std::string tokensHow, modelFrom;  // which tokenizer; "checkpoint at step N" / "weights in DIR"
  std::vector<std::string> skippedCheckpoints;  // newer ones passed over: "step N: why"
};

/// Mean next-token cross-entropy of run `runId`'s model over the text (every window's
/// predictions weigh equally per token).
EvalResult evaluateRun(store::RunStore& store, int64_t runId, const EvalOptions& options);

}  // namespace depthlab::hf

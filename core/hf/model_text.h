// Token ids for evaluating or probing a model on text: an imported model's own tokenizer run out
// of process (SentencePiece's tokenizer.model through the lab's depthlab-spm-encode, or
// tokenizer.json through Python's `tokenizers` package when an interpreter has it), a file of
// token ids, and cutting them into fixed-length sequences. Either tokenizer file gives the same
// ids: the whole text is one string, newlines kept, BOS first as the model's tokenizer adds it.
// Says which tokenizer was used; refuses, with the reason, when none is available. No model here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/data_config.h"

namespace depthlab::hf {

struct EncodedText {
  std::vector<int32_t> ids;
  std::string how;  // e.g. "tokenizer.json through Python tokenizers (/path/to/python)"
};

/// Encodes the whole of `textFile` as one text with the tokenizer in `modelDir`
/// (tokenizer.model when depthlab-spm-encode runs, else tokenizer.json); throws HfModelError
/// saying what is missing. BOS: tokenizer.json's post-processor adds it, or for
/// tokenizer.model tokenizer_config.json's add_bos_token (true when it is not there).
EncodedText encodeWithModelTokenizer(const std::string& modelDir, const std::string& textFile);

/// Each of `texts` encoded on its own by the tokenizer.json in `modelDir`, with the tokenizer's
/// own special tokens (as `tokenizer.encode(text)` in transformers, and lm-eval by default), in
/// one Python process; `how` says which. Throws HfModelError when the folder has no
/// tokenizer.json or no interpreter has `tokenizers`.
std::vector<std::vector<int32_t>> encodeStringsWithModelTokenizer(
    const std::string& modelDir, const std::vector<std::string>& texts, std::string& how);

/// A tokens file: whitespace-separated ids, one sequence per line (empty lines skipped). Every
/// id must be in [0, vocab); throws HfModelError naming the line otherwise.
std::vector<std::vector<int32_t>> readTokenSequences(const std::string& path, int vocab);

/// The SentencePiece model file a run with `data` was tokenized with: spm:/path.model as given,
/// or for spm:N the model trained on its corpus, found through the corpus's token store (which
/// is prepared when it is missing). Throws HfModelError for a byte-level run.
std::string spmModelOfRun(const data::DataConfig& data);

/// Checks every id is in [0, vocab) (a tokenizer of another model gives larger ids).
void checkIdsInVocab(const std::vector<int32_t>& ids, int vocab, const std::string& what);

/// `count` windows of `length` + 1 tokens, evenly spaced over `ids` (overlapping only when the
/// stream is too short for disjoint ones); throws when the stream has fewer than length + 1.
std::vector<std::vector<int32_t>> cutWindows(const std::vector<int32_t>& ids, int count,
                                             int length);

}  // namespace depthlab::hf

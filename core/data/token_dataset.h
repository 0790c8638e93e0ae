// TokenDataset: a token stream split into train and validation (the last valFraction, no
// overlap), with batches that are pure functions of (seed, step, micro-batch), so paired
// runs see identical batches and a resumed run continues exactly. No torch here.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "data/data_config.h"

namespace depthlab::data {

/// B rows of T+1 tokens: inputs are [0, T), targets [1, T+1).
struct TokenBatch {
  int batch = 0, seqLen = 0;
  std::vector<int64_t> inputs;   // (B, T) row-major
  std::vector<int64_t> targets;  // (B, T)
};

class TokenDataset {
 public:
  /// Throws DataError when either split holds fewer tokens than one batch needs.
  TokenDataset(std::vector<int32_t> tokens, int vocabSize, double valFraction, int seqLen,
               int batchSize);

  TokenBatch trainBatch(int64_t seed, int64_t step, int micro) const;
  /// Fixed validation batch `i` (windows spread evenly over the validation split).
  TokenBatch valBatch(int i, int nBatches) const;
  /// `rows` held-out windows spread evenly over the validation split (the probe batch).
  TokenBatch probeBatch(int rows) const;
  size_t trainTokens() const { return m_split; }
  size_t valTokens() const { return m_tokens.size() - m_split; }
  int vocabSize() const { return m_vocab; }

 private:
  TokenBatch window(const std::vector<size_t>& starts) const;
  std::vector<int32_t> m_tokens;
  size_t m_split = 0;
  int m_vocab = 0, m_seqLen = 0, m_batch = 0;
};

/// Loads (and caches) the corpus named by `data` as tokens; fills `tokenizerName` and
/// `vocabSize`. `data.corpus` empty means the default corpus.
struct CorpusTokens {
  std::vector<int32_t> tokens;
  int vocabSize = 0;
  std::string corpusPath, tokenizerName;
};
/// Reads (and tokenizes, or takes from the token cache) the corpus of `data`. `phase` is told
/// each slow step as it starts ("reading corpus ...", "training tokenizer ...", "encoding ...").
CorpusTokens loadCorpusTokens(const DataConfig& data,
                              const std::function<void(const std::string&)>& phase = {});

}  // namespace depthlab::data

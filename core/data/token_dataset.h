// TokenDataset: a token stream split into train and validation (the last valFraction, no
// overlap), with batches that are pure functions of (seed, step, micro-batch), so paired
// runs see identical batches and a resumed run continues exactly. The tokens are a
// TokenSource: in memory, or memory-mapped token-store shards read window by window, so
// memory does not grow with the corpus. No torch here.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "data/data_config.h"
#include "data/token_source.h"

namespace depthlab::data {

/// B rows of T+1 tokens: inputs are [0, T), targets [1, T+1).
struct TokenBatch {
  int batch = 0, seqLen = 0;
  std::vector<int64_t> inputs;   // (B, T) row-major
  std::vector<int64_t> targets;  // (B, T)
};

class TokenDataset {
 public:
  /// Throws DataError when either split holds fewer tokens than one batch needs, or when the
  /// source's ids exceed `vocabSize`.
  TokenDataset(std::shared_ptr<const TokenSource> tokens, int vocabSize, double valFraction,
               int seqLen, int batchSize);
  TokenDataset(std::vector<int32_t> tokens, int vocabSize, double valFraction, int seqLen,
               int batchSize);

  TokenBatch trainBatch(int64_t seed, int64_t step, int micro) const;
  /// Rows [rowBegin, rowEnd) of trainBatch(seed, step, micro): a data-parallel rank's share.
  TokenBatch trainBatchRows(int64_t seed, int64_t step, int micro, int rowBegin, int rowEnd) const;
  /// Fixed validation batch `i` (windows spread evenly over the validation split).
  TokenBatch valBatch(int i, int nBatches) const;
  /// `rows` held-out windows spread evenly over the validation split (the probe batch).
  TokenBatch probeBatch(int rows) const;
  size_t trainTokens() const { return m_split; }
  size_t valTokens() const { return m_size - m_split; }
  int vocabSize() const { return m_vocab; }
  const TokenSource& source() const { return *m_tokens; }

 private:
  TokenBatch window(const std::vector<size_t>& starts) const;
  std::shared_ptr<const TokenSource> m_tokens;
  size_t m_size = 0;
  size_t m_split = 0;
  int m_vocab = 0, m_seqLen = 0, m_batch = 0;
};

/// The tokens of a corpus, mapped from its token store (or token files).
struct CorpusTokens {
  std::shared_ptr<const TokenSource> tokens;
  int vocabSize = 0;
  std::string corpusPath, tokenizerName;
  std::string storeDir;  // the token store read ("" for .bin token files)
};
/// The corpus of `data` as tokens: a token store or .bin files are mapped as they are; text
/// (file, folder, .jsonl[.gz|.zst]) is first prepared into its store (prepareCorpus), which is
/// reused while the text is unchanged. `data.corpus` empty means the default corpus. `phase`
/// is told each slow step as it starts, and the tokenizing progress about twice a second.
/// Setting `stop` interrupts a preparation (its finished shards are kept; the next load
/// resumes) and throws DataError saying so.
CorpusTokens loadCorpusTokens(const DataConfig& data,
                              const std::function<void(const std::string&)>& phase = {},
                              const std::atomic<bool>* stop = nullptr);

}  // namespace depthlab::data

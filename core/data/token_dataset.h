// TokenDataset: a token stream split into train and validation (the last valFraction, no
// overlap), with batches that are pure functions of (seed, step, micro-batch), so paired
// runs see identical batches and a resumed run continues exactly. The tokens are a
// TokenSource: in memory, or memory-mapped token-store shards read window by window, so
// memory does not grow with the corpus. Two packings: `packed` rows are windows anywhere in
// the stream (across documents, the end-of-document id between them); `document` rows are
// one document each (document_split.h), truncated to T+1 tokens and padded: pad inputs hold
// the end-of-document id, pad targets kIgnoreTarget, which the loss, the evaluation and the
// probes skip. No torch here.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "data/data_config.h"
#include "data/document_split.h"
#include "data/token_source.h"

namespace depthlab::data {

/// A target that does not count: a pad's (torch's default ignore_index of cross_entropy).
inline constexpr int64_t kIgnoreTarget = -100;

enum class Packing { Packed, Document };
/// "packed" or "document"; throws DataError naming the accepted values otherwise.
Packing packingFrom(const std::string& name);

/// B rows of T+1 tokens: inputs are [0, T), targets [1, T+1). Document packing pads a row
/// on the right: its targets from the last real token on are kIgnoreTarget.
struct TokenBatch {
  int batch = 0, seqLen = 0;
  std::vector<int64_t> inputs;   // (B, T) row-major
  std::vector<int64_t> targets;  // (B, T)
};

class TokenDataset {
 public:
  /// Throws DataError when either split holds fewer tokens (document packing: documents)
  /// than one batch needs, when the source's ids exceed `vocabSize`, or, for document
  /// packing, when `eod` is not an id of the vocabulary.
  TokenDataset(std::shared_ptr<const TokenSource> tokens, int vocabSize, double valFraction,
               int seqLen, int batchSize, Packing packing = Packing::Packed, int64_t eod = -1);
  TokenDataset(std::vector<int32_t> tokens, int vocabSize, double valFraction, int seqLen,
               int batchSize, Packing packing = Packing::Packed, int64_t eod = -1);

  TokenBatch trainBatch(int64_t seed, int64_t step, int micro) const;
  /// Rows [rowBegin, rowEnd) of trainBatch(seed, step, micro): a data-parallel rank's share.
  TokenBatch trainBatchRows(int64_t seed, int64_t step, int micro, int rowBegin, int rowEnd) const;
  /// Fixed validation batch `i` (windows spread evenly over the validation split).
  TokenBatch valBatch(int i, int nBatches) const;
  /// `rows` held-out windows spread evenly over the validation split (the probe batch).
  TokenBatch probeBatch(int rows) const;
  /// The targets of trainBatch(seed, step, micro) that count (pads do not): B x T packed;
  /// from the documents' lengths alone for document packing (no token is read).
  uint64_t trainTargets(int64_t seed, int64_t step, int micro) const;
  size_t trainTokens() const { return m_split; }
  size_t valTokens() const { return m_size - m_split; }
  int vocabSize() const { return m_vocab; }
  Packing packing() const { return m_docs ? Packing::Document : Packing::Packed; }
  /// Document packing: the documents of each split (null when packed).
  const DocumentSplit* documents() const { return m_docs.get(); }
  const TokenSource& source() const { return *m_tokens; }

 private:
  /// Row r's choice for (seed, step, micro): a window start in [0, range) or a document index.
  std::vector<size_t> trainPicks(int64_t seed, int64_t step, int micro, size_t range) const;
  TokenBatch window(const std::vector<size_t>& starts) const;
  /// Rows of the documents `picks` of `docs`, truncated to T+1 tokens and padded.
  TokenBatch documentRows(const std::vector<DocSpan>& docs, const std::vector<size_t>& picks) const;
  void checkDocuments() const;
  std::shared_ptr<const TokenSource> m_tokens;
  size_t m_size = 0;
  size_t m_split = 0;
  int m_vocab = 0, m_seqLen = 0, m_batch = 0;
  int64_t m_eod = -1;
  std::shared_ptr<const DocumentSplit> m_docs;  // document packing only
};

/// The tokens of a corpus, mapped from its token store (or token files).
struct CorpusTokens {
  std::shared_ptr<const TokenSource> tokens;
  int vocabSize = 0;
  std::string corpusPath, tokenizerName;
  std::string storeDir;  // the token store read ("" for .bin token files)
  int eod = -1;          // the end-of-document id (-1: .bin token files, none known)
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
/// The dataset of `data` on `corpus` (its packing): throws DataError when document packing
/// meets tokens without an end-of-document id (.bin token files).
TokenDataset makeDataset(CorpusTokens corpus, const DataConfig& data, int seqLen, int batchSize);

}  // namespace depthlab::data

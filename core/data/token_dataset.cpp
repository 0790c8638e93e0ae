// TokenDataset and corpus loading; see token_dataset.h.
#include "data/token_dataset.h"

#include "data/corpus_sources.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "data/corpus.h"
#include "data/corpus_prepare.h"
#include "data/token_store.h"
#include "data/default_corpus.h"
#include "data/tokenizer.h"
#include "util/content_hash.h"

namespace depthlab::data {

namespace fs = std::filesystem;

namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

Packing packingFrom(const std::string& name) {
  if (name == kPackingPacked) return Packing::Packed;
  if (name == kPackingDocument) return Packing::Document;
  throw DataError("unknown packing '" + name + "' (known: " + kPackingPacked + ", " +
                  kPackingDocument + ")");
}

TokenDataset::TokenDataset(std::vector<int32_t> tokens, int vocabSize, double valFraction,
                           int seqLen, int batchSize, Packing packing, int64_t eod)
    : TokenDataset(std::make_shared<InMemoryTokens>(std::move(tokens)), vocabSize, valFraction,
                   seqLen, batchSize, packing, eod) {}

TokenDataset::TokenDataset(std::shared_ptr<const TokenSource> tokens, int vocabSize,
                           double valFraction, int seqLen, int batchSize, Packing packing,
                           int64_t eod)
    : m_tokens(std::move(tokens)), m_vocab(vocabSize), m_seqLen(seqLen), m_batch(batchSize),
      m_eod(eod) {
  const size_t n = m_tokens->size();
  m_size = n;
  m_split = n - static_cast<size_t>(static_cast<double>(n) * valFraction);
  if (m_tokens->vocabSize() > vocabSize) {
    throw DataError("token id " + std::to_string(m_tokens->vocabSize() - 1) +
                    " is outside the vocabulary (size " + std::to_string(vocabSize) + ")");
  }
  if (packing == Packing::Document) {
    if (eod < 0 || eod >= vocabSize) {
      throw DataError("document packing needs the end-of-document id of the tokens" +
                      (eod < 0 ? std::string(", and ") + m_tokens->describe() + " has none"
                               : " inside the vocabulary (got " + std::to_string(eod) + ")"));
    }
    m_docs = std::make_shared<DocumentSplit>(*m_tokens, eod, m_split);
    checkDocuments();
    return;
  }
  const size_t needTrain = static_cast<size_t>(batchSize) * (seqLen + 1);
  const size_t needVal = static_cast<size_t>(seqLen) + 1;
  if (m_split < needTrain || n - m_split < needVal) {
    throw DataError("corpus too short: " + std::to_string(n) + " tokens give " +
                    std::to_string(m_split) + " for training and " + std::to_string(n - m_split) +
                    " for validation; one batch needs " + std::to_string(needTrain) +
                    " training and " + std::to_string(needVal) + " validation tokens (batch " +
                    std::to_string(batchSize) + " x sequence " + std::to_string(seqLen) +
                    "+1). Use a larger corpus or a smaller batch / sequence length.");
  }
}

void TokenDataset::checkDocuments() const {
  const size_t train = m_docs->train().size(), val = m_docs->val().size();
  if (train >= static_cast<size_t>(m_batch) && val >= 1) return;
  const uint64_t n = m_docs->documents();
  throw DataError("too few documents for document packing: the tokens hold " + std::to_string(n) +
                  " document" + (n == 1 ? "" : "s") + " (a .jsonl record or a text file is one), " +
                  std::to_string(train) + " for training and " + std::to_string(val) +
                  " for validation (one across the split is in neither); one batch needs " +
                  std::to_string(m_batch) + " training documents and 1 validation document. "
                  "Use data.packing = packed, or a corpus of more documents (.jsonl records, a "
                  "folder of files).");
}

TokenBatch TokenDataset::window(const std::vector<size_t>& starts) const {
  TokenBatch b;
  b.batch = static_cast<int>(starts.size());
  b.seqLen = m_seqLen;
  const size_t T = static_cast<size_t>(m_seqLen);
  b.inputs.resize(starts.size() * T);
  b.targets.resize(starts.size() * T);
  std::vector<int64_t> row(T + 1);
  for (size_t r = 0; r < starts.size(); ++r) {
    m_tokens->read(starts[r], T + 1, row.data());
    for (size_t t = 0; t <= T; ++t) {
      // A damaged shard must not index past the embedding (a CUDA device assert).
      if (row[t] >= m_vocab) {
        throw DataError("token id " + std::to_string(row[t]) + " at position " +
                        std::to_string(starts[r] + t) + " of " + m_tokens->describe() +
                        " is outside the vocabulary (size " + std::to_string(m_vocab) + ")");
      }
    }
    std::copy(row.begin(), row.end() - 1, b.inputs.begin() + static_cast<long>(r * T));
    std::copy(row.begin() + 1, row.end(), b.targets.begin() + static_cast<long>(r * T));
  }
  return b;
}

TokenBatch TokenDataset::trainBatch(int64_t seed, int64_t step, int micro) const {
  return trainBatchRows(seed, step, micro, 0, m_batch);
}

std::vector<size_t> TokenDataset::trainPicks(int64_t seed, int64_t step, int micro,
                                             size_t range) const {
  std::vector<size_t> picks(static_cast<size_t>(m_batch));
  uint64_t state = splitmix64(static_cast<uint64_t>(seed) * 0x100000001B3ull ^
                              splitmix64(static_cast<uint64_t>(step) * 1315423911ull +
                                         static_cast<uint64_t>(micro)));
  for (auto& s : picks) {
    state = splitmix64(state);
    s = static_cast<size_t>(state % range);
  }
  return picks;
}

TokenBatch TokenDataset::trainBatchRows(int64_t seed, int64_t step, int micro, int rowBegin,
                                        int rowEnd) const {
  // Packed: window starts in [0, split - T); document: indices of training documents.
  const size_t range = m_docs ? m_docs->train().size() : m_split - static_cast<size_t>(m_seqLen);
  std::vector<size_t> starts = trainPicks(seed, step, micro, range);
  if (rowBegin != 0 || rowEnd != m_batch) {
    if (rowBegin < 0 || rowEnd > m_batch || rowBegin >= rowEnd) {
      throw std::out_of_range("trainBatchRows: rows outside the micro-batch");
    }
    starts = std::vector<size_t>(starts.begin() + rowBegin, starts.begin() + rowEnd);
  }
  return m_docs ? documentRows(m_docs->train(), starts) : window(starts);
}

uint64_t TokenDataset::trainTargets(int64_t seed, int64_t step, int micro) const {
  const uint64_t T = static_cast<uint64_t>(m_seqLen);
  if (!m_docs) return static_cast<uint64_t>(m_batch) * T;
  uint64_t n = 0;
  for (size_t i : trainPicks(seed, step, micro, m_docs->train().size())) {
    n += std::min<uint64_t>(m_docs->train()[i].length, T + 1) - 1;
  }
  return n;
}

TokenBatch TokenDataset::documentRows(const std::vector<DocSpan>& docs,
                                      const std::vector<size_t>& picks) const {
  TokenBatch b;
  b.batch = static_cast<int>(picks.size());
  b.seqLen = m_seqLen;
  const size_t T = static_cast<size_t>(m_seqLen);
  b.inputs.assign(picks.size() * T, m_eod);
  b.targets.assign(picks.size() * T, kIgnoreTarget);
  std::vector<int64_t> row(T + 1);
  for (size_t r = 0; r < picks.size(); ++r) {
    const DocSpan& d = docs[picks[r]];
    const size_t n = static_cast<size_t>(std::min<uint64_t>(d.length, T + 1));  // >= 2
    m_tokens->read(d.start, n, row.data());
    for (size_t t = 0; t < n; ++t) {
      if (row[t] >= m_vocab) {  // a damaged shard must not index past the embedding
        throw DataError("token id " + std::to_string(row[t]) + " at position " +
                        std::to_string(d.start + t) + " of " + m_tokens->describe() +
                        " is outside the vocabulary (size " + std::to_string(m_vocab) + ")");
      }
    }
    std::copy(row.begin(), row.begin() + static_cast<long>(std::min(n, T)),
              b.inputs.begin() + static_cast<long>(r * T));
    std::copy(row.begin() + 1, row.begin() + static_cast<long>(n),
              b.targets.begin() + static_cast<long>(r * T));
  }
  return b;
}

TokenBatch TokenDataset::valBatch(int i, int nBatches) const {
  const size_t total = static_cast<size_t>(nBatches) * static_cast<size_t>(m_batch);
  std::vector<size_t> starts(static_cast<size_t>(m_batch));
  if (m_docs) {  // documents spread evenly over the validation split
    const size_t docs = m_docs->val().size();
    for (size_t r = 0; r < starts.size(); ++r) {
      const size_t k = static_cast<size_t>(i) * static_cast<size_t>(m_batch) + r;
      starts[r] = std::min(docs - 1, docs * k / std::max<size_t>(total, 1));
    }
    return documentRows(m_docs->val(), starts);
  }
  const size_t valLen = m_size - m_split;
  const size_t span = valLen - static_cast<size_t>(m_seqLen);  // starts in [split, split+span)
  for (size_t r = 0; r < starts.size(); ++r) {
    const size_t k = static_cast<size_t>(i) * static_cast<size_t>(m_batch) + r;
    starts[r] = m_split + (total > 1 ? span * k / total : 0);
  }
  return window(starts);
}

TokenBatch TokenDataset::probeBatch(int rows) const {
  std::vector<size_t> starts(static_cast<size_t>(rows));
  // Offset by half a stride so probe windows differ from the first validation windows.
  if (m_docs) {
    const size_t docs = m_docs->val().size();
    for (size_t r = 0; r < starts.size(); ++r) {
      starts[r] = std::min(docs - 1, docs * (2 * r + 1) / (2 * starts.size()));
    }
    return documentRows(m_docs->val(), starts);
  }
  const size_t span = m_size - m_split - static_cast<size_t>(m_seqLen);
  for (size_t r = 0; r < starts.size(); ++r) {
    starts[r] = m_split + std::min(span, span * (2 * r + 1) / (2 * starts.size()));
  }
  return window(starts);
}

CorpusTokens loadCorpusTokens(const DataConfig& data,
                              const std::function<void(const std::string&)>& phase,
                              const std::atomic<bool>* stop) {
  auto say = [&](const std::string& what) {
    if (phase) phase(what);
  };
  CorpusTokens ct;
  ct.corpusPath = data.corpus;
  if (ct.corpusPath.empty()) {
    auto st = ensureDefaultCorpus();
    if (!st.ready) throw DataError(st.message);
    ct.corpusPath = st.path;
  }
  requireCorpusFileOrFolder(ct.corpusPath);  // missing, or a FIFO that would block
  if (isTokenStore(ct.corpusPath)) {  // a prepared store named directly
    say("mapping token store " + ct.corpusPath);
    std::unique_ptr<StoreIndex> index;
    try {
      index = readStoreIndex(ct.corpusPath);
    } catch (const StaleStoreError& e) {
      throw StaleStoreError(std::string(e.what()) + "; name its corpus instead (or run "
                            "depthlab-cli corpus prepare CORPUS) to rebuild it", e.reason());
    }
    ct.tokens = openTokenStore(ct.corpusPath);
    ct.vocabSize = index->vocab;
    ct.eod = index->eod;
    ct.tokenizerName = index->tokenizerName;
    ct.storeDir = ct.corpusPath;
    return ct;
  }
  if (isTokenFile(ct.corpusPath) || holdsOnlyTokenFiles(ct.corpusPath)) {
    say("mapping token files " + ct.corpusPath);
    auto mapped = openTokenFiles(ct.corpusPath);
    ct.vocabSize = mapped->vocabSize();
    ct.tokens = std::move(mapped);
    ct.tokenizerName = "pretokenized";
    return ct;
  }
  PrepareOptions o;
  o.tokenizer = data.tokenizer;
  o.sampleMB = data.tokenizerSampleMB;
  o.phase = phase;
  o.stop = stop;
  // Every 2 s: the window shows the newest line, a log keeps a line per 2 s.
  auto lastProgress = std::chrono::steady_clock::now() - std::chrono::seconds(10);
  if (phase) {
    o.progress = [&](const PrepareProgress& p) {
      const auto now = std::chrono::steady_clock::now();
      if (now - lastProgress < std::chrono::seconds(2) && p.rawDone < p.rawTotal) return;
      lastProgress = now;
      phase(formatProgress(p));
    };
  }
  say("reading corpus " + ct.corpusPath);
  const PrepareReport r = prepareCorpus(ct.corpusPath, o);
  if (r.interrupted) {
    throw DataError("stopped while tokenizing '" + ct.corpusPath + "': " + std::to_string(r.shards) +
                    " finished shard(s) kept in " + r.storeDir + "; the next launch resumes there");
  }
  if (r.skipped.total() > 0) say("skipped while tokenizing: " + r.skipped.summary());
  say("mapping token store " + r.storeDir + " (" + std::to_string(r.tokens) + " tokens, " +
      std::to_string(r.shards) + " shard" + (r.shards == 1 ? "" : "s") +
      (r.reused ? ", up to date" : "") + ")");
  ct.tokens = openTokenStore(r.storeDir);
  ct.vocabSize = r.vocab;
  ct.eod = r.eod;
  ct.tokenizerName = r.tokenizerName;
  ct.storeDir = r.storeDir;
  return ct;
}

TokenDataset makeDataset(CorpusTokens corpus, const DataConfig& data, int seqLen, int batchSize) {
  const Packing packing = packingFrom(data.packing);
  if (packing == Packing::Document && corpus.eod < 0) {
    throw DataError("data.packing = document needs documents told apart, and '" + corpus.corpusPath +
                    "' holds pre-tokenized tokens without a known end-of-document id; name "
                    "its text (a DepthLab token store marks every document's end) or use packed");
  }
  if (packing == Packing::Packed) {
    return TokenDataset(std::move(corpus.tokens), corpus.vocabSize, data.valFraction, seqLen,
                        batchSize, packing, corpus.eod);
  }
  try {
    return TokenDataset(std::move(corpus.tokens), corpus.vocabSize, data.valFraction, seqLen,
                        batchSize, packing, corpus.eod);
  } catch (const DataError& e) {  // name the corpus, not its shards
    throw DataError("corpus '" + corpus.corpusPath + "': " + e.what());
  }
}

}  // namespace depthlab::data

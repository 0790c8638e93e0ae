// TokenSource: a read-only token stream of any length, read by windows. Two kinds: tokens held
// in memory (small corpora, tests) and tokens in memory-mapped files (token-store shards,
// nanoGPT / llm.c .bin files), possibly many files seen as one stream. Knows nothing of
// batches or splits (TokenDataset) or of how files are written (token_store).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/mapped_file.h"

namespace depthlab::data {

class TokenSource {
 public:
  virtual ~TokenSource() = default;
  virtual uint64_t size() const = 0;
  /// The vocabulary the ids claim to be below: measured for .bin files, a shard header's
  /// claim for token stores (TokenDataset checks every window against its vocabulary, so a
  /// damaged shard is a DataError, never an out-of-range embedding index).
  virtual int vocabSize() const = 0;
  /// Copies tokens [start, start + n) to `out` (n values). Throws DataError past the end.
  virtual void read(uint64_t start, size_t n, int64_t* out) const = 0;
  /// "in memory" or the files it maps, for messages.
  virtual std::string describe() const = 0;
  /// All tokens (tests and small corpora only: the whole stream in memory).
  std::vector<int32_t> readAll() const;
  /// The positions of every `id` in the stream, ascending: read in blocks, so memory holds the
  /// positions and one block (a mapped stream hands its pages back as it goes).
  std::vector<uint64_t> positionsOf(int64_t id) const;
};

class InMemoryTokens : public TokenSource {
 public:
  /// Throws DataError for a negative id.
  explicit InMemoryTokens(std::vector<int32_t> tokens);
  uint64_t size() const override { return m_tokens.size(); }
  int vocabSize() const override { return m_vocab; }
  void read(uint64_t start, size_t n, int64_t* out) const override;
  std::string describe() const override { return "in memory"; }

 private:
  std::vector<int32_t> m_tokens;
  int m_vocab = 0;
};

/// Tokens stored as little-endian uint8, uint16 or uint32 at an offset of mapped files.
class MappedTokens : public TokenSource {
 public:
  struct Segment {
    MappedFile file;
    size_t offset = 0;      // bytes before the first token (a header)
    uint64_t count = 0;     // tokens
    int bytesPerToken = 2;  // 1, 2 or 4
  };
  /// Segments in stream order; `vocab` bounds every id (checked by the writer or measured).
  MappedTokens(std::vector<Segment> segments, int vocab);
  uint64_t size() const override { return m_total; }
  int vocabSize() const override { return m_vocab; }
  void read(uint64_t start, size_t n, int64_t* out) const override;
  std::string describe() const override;
  size_t segmentCount() const { return m_segments.size(); }
  /// Every `reads` windows, the mapped pages are handed back (madvise MADV_DONTNEED; the data
  /// stay in the page cache): without it each window read leaves its pages in the process's
  /// resident set (with the kernel's fault-around, a whole page-cache folio: up to 2 MB), which
  /// would grow towards the size of the store over a long run. 0 = never.
  void setReleaseEvery(uint64_t reads) { m_releaseEvery = reads; }

 private:
  void releasePages() const;
  std::vector<Segment> m_segments;
  mutable std::atomic<uint64_t> m_reads{0};
  uint64_t m_releaseEvery = 64;
  std::vector<uint64_t> m_first;  // global index of each segment's first token
  uint64_t m_total = 0;
  int m_vocab = 0;
};

}  // namespace depthlab::data

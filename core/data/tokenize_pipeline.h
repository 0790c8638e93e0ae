// TokenizePipeline: the threads of one corpus preparation. A reader cuts the corpus into chunks
// (CorpusChunker), `threads` workers turn each chunk into tokens at the store's width (bytes are
// their own ids; SentencePiece runs spm_encode on the chunk, out of process), with the
// tokenizer's end-of-document id after every document that ends in the chunk, and the caller
// takes the results in chunk order with next(). At most 2 x threads + 2 chunks are in flight.
// Chunks before `resumeChunk` are read (their files hashed) but not tokenized. Deciding what to
// tokenize and writing shards is corpus_prepare's.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "data/corpus_chunker.h"
#include "data/tokenizer.h"

namespace depthlab::data {

/// The tokenizer a preparation uses, with the hash that identifies it in the store.
struct ResolvedTokenizer {
  std::string name;
  uint64_t hash = 0;
  int vocab = 0;                      // every id, end-of-document included
  int eod = -1;                       // the end-of-document id
  std::unique_ptr<SpmTokenizer> spm;  // null for byte
};

/// One tokenized chunk.
struct DoneChunk {
  std::string encoded;  // the tokens at the store's width
  uint64_t count = 0;
  SkippedInput skipped;
  uint64_t rawDone = 0, textBytes = 0;
  bool hasText = false;
};

class TokenizePipeline {
 public:
  /// `threads` 0 = every core; `tmpDir` holds SentencePiece's chunk files while they encode.
  TokenizePipeline(const std::vector<SourceFile>& sources, bool folder, const ResolvedTokenizer& tok,
                   int threads, size_t chunkBytes, uint64_t resumeChunk, const std::string& tmpDir);
  ~TokenizePipeline() { stop(); }
  TokenizePipeline(const TokenizePipeline&) = delete;
  TokenizePipeline& operator=(const TokenizePipeline&) = delete;

  void start();
  /// Chunk `seq` (the next in order); false when the stream ended. Rethrows a reader or worker
  /// error (DataError naming the file).
  bool next(uint64_t seq, DoneChunk& out);
  /// Stops and joins every thread (idempotent).
  void stop();

  const CorpusChunker& chunker() const { return m_chunker; }
  /// Raw bytes read while skipping to the resume point (for progress).
  uint64_t skippedRawDone() const { return m_skipRaw.load(); }
  int threads() const { return m_threads; }

 private:
  void fail(std::exception_ptr e);
  void readLoop();
  void workLoop();
  DoneChunk tokenize(RawChunk& c);
  /// SentencePiece's ids of the chunk's text, the end-of-document id after each document:
  /// each document encoded whole where depthlab-spm-encode runs, else by encodeLines.
  std::vector<int32_t> encodeDocuments(const DocText& doc, uint64_t seq) const;
  /// The same through spm_encode's lines (a document's newlines are dropped).
  std::vector<int32_t> encodeLines(const DocText& doc, const std::string& scratch) const;

  CorpusChunker m_chunker;
  const ResolvedTokenizer& m_tok;
  uint64_t m_resume;
  std::string m_dir;
  int m_threads = 1;
  uint64_t m_window = 4;

  std::mutex m_mu;
  std::condition_variable m_cv;
  std::deque<RawChunk> m_raw;
  std::map<uint64_t, DoneChunk> m_done;
  uint64_t m_writerAt = 0, m_chunks = 0, m_seen = 0;
  bool m_readerDone = false, m_abort = false;
  std::exception_ptr m_error;
  std::atomic<uint64_t> m_skipRaw{0};
  std::thread m_reader;
  std::vector<std::thread> m_workers;
};

}  // namespace depthlab::data

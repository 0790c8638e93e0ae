// Preparing a corpus: its text tokenized, in a stream and on all cores, into a token store
// (token_store.h) that training maps. The store sits beside the corpus (or in the data cache
// when that folder is read-only), named after the corpus and the tokenizer, and is keyed on
// content: it is reused while every source has the size, time and hash it had; a changed
// source rebuilds it; an interrupted preparation resumes after its last finished shard.
// Every document (a .jsonl record, a text file) is followed by the tokenizer's end-of-document
// id. SentencePiece runs out of process (spm_encode, one per worker, or depthlab-spm-encode
// with each document whole for a model whose ids depend on its newlines) and, for spm:N, is
// trained on a sample of the corpus spread over its files. Nothing here knows about batches.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "data/token_store.h"

namespace depthlab::data {

/// The file in a store's folder whose lock (util/file_lock.h) a preparation holds.
inline constexpr const char* kPrepareLockName = "prepare.lock";

struct PrepareProgress {
  uint64_t rawDone = 0, rawTotal = 0;  // bytes on disk
  uint64_t textBytes = 0;              // text tokenized (decompressed, extracted)
  uint64_t tokens = 0;
  size_t shards = 0;
  double seconds = 0;
  size_t resumedShards = 0;
};
/// "tokenizing  37%  1.0 of 2.7 GB  250 MB/s  12.3 M tokens  3 shards  ETA 7 s".
std::string formatProgress(const PrepareProgress& p);

struct PrepareOptions {
  std::string tokenizer = "byte";     // byte | spm:N | spm:/path.model
  std::string storeDir;               // "" = storeDirFor(corpus, tokenizer)
  uint64_t shardTokens = 100000000;   // a shard closes at the first chunk end past this
  size_t chunkBytes = 0;              // 0: 4 MiB for byte, 8 MiB for SentencePiece
  int threads = 0;                    // tokenizing workers; 0 = every core
  int sampleMB = 100;                 // text spm:N trains on, spread over the corpus
  std::function<void(const std::string&)> phase;       // start-up phases, as they start
  std::function<void(const PrepareProgress&)> progress;  // about twice a second while tokenizing
  const std::atomic<bool>* stop = nullptr;  // set to interrupt; finished shards are kept
  size_t stopAfterShards = 0;               // interrupt after this many new shards (tests)
  bool verify = false;  // hash every source, not only those whose size or time changed: an
                        // edit that kept both (cp -p, rsync -t, touch -d) rebuilds the store too
};

struct PrepareReport {
  std::string storeDir, tokenizerName;
  int vocab = 0;  // the end-of-document id included
  int eod = -1;   // the end-of-document id after every document
  uint64_t tokens = 0, inputBytes = 0, textBytes = 0;
  size_t shards = 0, resumedShards = 0;
  double seconds = 0;
  bool reused = false;       // the store was up to date: nothing tokenized
  bool interrupted = false;  // stopped early; the next preparation resumes
  std::string rebuildReason; // why an existing store was not reused ("" when none was there)
  SkippedInput skipped;
};

/// Tokenizes `corpusPath` into its store unless that store is up to date. Throws DataError for
/// a missing, empty or binary corpus, an unknown tokenizer or a write error.
PrepareReport prepareCorpus(const std::string& corpusPath, const PrepareOptions& options);
/// Where the store of `corpusPath` tokenized by `tokenizer` lives.
std::string storeDirFor(const std::string& corpusPath, const std::string& tokenizer);
/// Writes up to `bytes` of the corpus's text, taken from evenly spaced places in every file,
/// to `outPath` (what spm:N trains on). Returns the bytes written.
uint64_t writeCorpusSample(const std::string& corpusPath, uint64_t bytes, const std::string& outPath);

}  // namespace depthlab::data

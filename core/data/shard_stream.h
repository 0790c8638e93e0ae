// ShardStream: writes a TokenizePipeline's chunks, in order, into a token store's shards — a
// shard closes (and the index is rewritten) at the first chunk end past the options'
// shardTokens, so an interrupted preparation resumes after its last closed shard. A stop asked
// through the options (Ctrl-C) or stopAfterShards ends the stream early; the unfinished shard
// is dropped. Does not decide what to tokenize (corpus_prepare.cpp does) nor mark the store
// complete.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "data/corpus_prepare.h"
#include "data/token_store.h"
#include "data/tokenize_pipeline.h"

namespace depthlab::data {

class ShardStream {
 public:
  ShardStream(TokenizePipeline& pipe, const ResolvedTokenizer& tok, StoreIndex& index,
              std::string storeDir, const PrepareOptions& options);
  /// Writes every chunk from number `seq` on, reporting through the options' progress;
  /// returns false when it was interrupted. `prog` ends with the stream's totals.
  bool run(uint64_t seq, PrepareProgress& prog);
  /// Whether any chunk written (or one before `seq` at a resume) held text.
  bool anyText() const { return m_anyText; }

 private:
  bool nextChunk(uint64_t seq, DoneChunk& d);
  void openShard();
  void closeShard(uint64_t endChunk, PrepareProgress& prog);
  void append(const DoneChunk& d, PrepareProgress& prog);
  bool stopAsked() const { return m_o.stop && m_o.stop->load(); }

  TokenizePipeline& m_pipe;
  const ResolvedTokenizer& m_tok;
  StoreIndex& m_index;
  std::string m_dir;
  const PrepareOptions& m_o;
  std::unique_ptr<ShardWriter> m_shard;
  bool m_anyText = false, m_interrupted = false;
};

}  // namespace depthlab::data

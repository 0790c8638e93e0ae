// See shard_stream.h.
#include "data/shard_stream.h"

#include "util/content_hash.h"

#include <chrono>
#include <filesystem>

#include "data/corpus.h"

namespace depthlab::data {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

ShardStream::ShardStream(TokenizePipeline& pipe, const ResolvedTokenizer& tok, StoreIndex& index,
                         std::string storeDir, const PrepareOptions& options)
    : m_pipe(pipe), m_tok(tok), m_index(index), m_dir(std::move(storeDir)), m_o(options) {}

// Ctrl-C in a terminal reaches the SentencePiece children too: a worker failing while a stop
// is asked for is the interruption, not an error.
bool ShardStream::nextChunk(uint64_t seq, DoneChunk& d) {
  try {
    return m_pipe.next(seq, d);
  } catch (const DataError&) {
    if (!stopAsked()) throw;
    m_pipe.stop();
    m_interrupted = true;
    return false;
  }
}

void ShardStream::openShard() {
  ShardHeader h;
  h.bytesPerToken = static_cast<uint32_t>(m_index.bytesPerToken);
  h.vocab = static_cast<uint32_t>(m_index.vocab);
  h.tokenizerHash = m_tok.hash;
  h.buildId = std::stoull(m_index.buildId, nullptr, 16);
  h.shardNumber = m_index.shards.size();
  m_shard =
      std::make_unique<ShardWriter>((fs::path(m_dir) / shardFileName(h.shardNumber)).string(), h);
}

void ShardStream::closeShard(uint64_t endChunk, PrepareProgress& prog) {
  m_shard->finish();
  m_index.shards.push_back({shardFileName(m_index.shards.size()), m_shard->count(), endChunk,
                            util::hex64(m_shard->contentHash())});
  m_shard.reset();
  writeStoreIndex(m_dir, m_index);
  prog.shards = m_index.shards.size();
}

void ShardStream::append(const DoneChunk& d, PrepareProgress& prog) {
  if (!m_shard) openShard();
  m_shard->appendEncoded(d.encoded.data(), d.count);
  m_anyText = m_anyText || d.hasText;
  m_index.skipped.linesWithoutText += d.skipped.linesWithoutText;
  m_index.skipped.invalidJsonLines += d.skipped.invalidJsonLines;
  m_index.skipped.invalidUtf8Lines += d.skipped.invalidUtf8Lines;
  prog.rawDone = d.rawDone;
  prog.textBytes += d.textBytes;
  prog.tokens += d.count;
}

bool ShardStream::run(uint64_t seq, PrepareProgress& prog) {
  m_anyText = seq > 0;
  auto lastReport = Clock::now();
  const auto t0 = Clock::now();
  size_t newShards = 0;
  DoneChunk d;
  while (nextChunk(seq, d)) {
    append(d, prog);
    ++seq;
    if (m_shard->count() >= m_o.shardTokens) {
      closeShard(seq, prog);
      ++newShards;
      if (stopAsked() || (m_o.stopAfterShards && newShards >= m_o.stopAfterShards)) {
        m_pipe.stop();
        m_interrupted = true;
        break;
      }
    } else if (stopAsked()) {
      m_pipe.stop();
      m_shard.reset();  // the unfinished shard is dropped; the next run redoes its chunks
      m_interrupted = true;
      break;
    }
    // The end is reported once, by the caller.
    if (m_o.progress && since(lastReport) >= 0.5 && prog.rawDone < prog.rawTotal) {
      prog.seconds = since(t0);
      prog.rawDone = std::max(prog.rawDone, m_pipe.skippedRawDone());
      m_o.progress(prog);
      lastReport = Clock::now();
    }
  }
  if (!m_interrupted) {
    if (m_shard && m_shard->count() > 0) closeShard(seq, prog);
    m_shard.reset();
    m_pipe.stop();
  }
  prog.seconds = since(t0);
  return !m_interrupted;
}

}  // namespace depthlab::data

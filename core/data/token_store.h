// The token store on disk: a folder of shards (shard-000000.dltok ...) and an index.json.
// A shard is a 64-byte header (magic "DLTSHARD", version, bytes per token, vocabulary, token
// count, tokenizer hash, build id, shard number) then little-endian tokens of the smallest
// width the vocabulary needs: uint16 (uint32 past 65,536 pieces; uint8 for at most 256, which
// no DepthLab tokenizer has since the byte tokenizer got its end-of-document id 256). Every
// document ends with the tokenizer's end-of-document id, which the index records (index
// version 2; stores of version 1 ran documents together and are rebuilt). The index lists the
// tokenizer, the sources with their sizes, times and content hashes, and the shards;
// `complete` is false while a preparation is under
// way or was interrupted (then it can resume after its last shard). Opening maps the shards:
// nothing is read until a window is. Also opens single token files: a shard, nanoGPT's .bin
// (uint16, no header) and llm.c's .bin (1 KiB header). Writing the index and shards is here;
// deciding what to tokenize is corpus_prepare's.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/corpus.h"
#include "data/token_source.h"
#include "util/stream_hash.h"

namespace depthlab::data {

inline constexpr char kShardMagic[8] = {'D', 'L', 'T', 'S', 'H', 'A', 'R', 'D'};
inline constexpr uint32_t kShardVersion = 1;
inline constexpr size_t kShardHeaderBytes = 64;
inline constexpr const char* kStoreIndexName = "index.json";
inline constexpr int kStoreIndexVersion = 2;  // 2: an end-of-document id between documents

struct ShardHeader {
  uint32_t bytesPerToken = 2;
  uint32_t vocab = 0;
  uint64_t count = 0;
  uint64_t tokenizerHash = 0;
  uint64_t buildId = 0;
  uint64_t shardNumber = 0;
};

/// One source of a store: a file of the corpus, as it was when it was tokenized.
struct StoreSource {
  std::string path;     // relative to the corpus path ("" for a single file)
  uint64_t size = 0;
  int64_t mtimeNs = 0;
  std::string hash;     // hex StreamHash of its bytes; "" until it was read whole
};

struct StoreShard {
  std::string file;
  uint64_t tokens = 0;
  uint64_t endChunk = 0;  // chunks of the text stream tokenized up to the end of this shard
  std::string hash;       // hex StreamHash of its token bytes (header excluded); "" in stores
                          // written before shards were hashed
};

/// What a preparation skipped; counted, reported, never fatal.
struct SkippedInput {
  uint64_t linesWithoutText = 0;   // .jsonl lines with no string "text" field
  uint64_t invalidJsonLines = 0;   // .jsonl lines that are not JSON objects
  uint64_t invalidUtf8Lines = 0;   // .jsonl texts that are not valid UTF-8
  std::vector<std::string> binaryFiles;  // files of a folder that are not text
  uint64_t total() const { return linesWithoutText + invalidJsonLines + invalidUtf8Lines + binaryFiles.size(); }
  std::string summary() const;  // "" when nothing was skipped
};

/// A store index written by an earlier DepthLab (version 1: documents ran into each other, no
/// end-of-document token between them); its what() says so, naming the store, and reason()
/// says why alone. Preparation rebuilds such a store.
class StaleStoreError : public DataError {
 public:
  StaleStoreError(const std::string& what, std::string reason)
      : DataError(what), m_reason(std::move(reason)) {}
  const std::string& reason() const { return m_reason; }

 private:
  std::string m_reason;
};

struct StoreIndex {
  bool complete = false;
  std::string tokenizerSpec;   // as configured: byte, spm:N, spm:/path.model
  std::string tokenizerName;   // byte, spm:<model path>
  std::string tokenizerHash;   // hex hash of the tokenizer model ("byte" has a fixed one)
  int vocab = 0;                // every id, the end-of-document id included
  int eod = -1;                 // the end-of-document id that ends every document
  int bytesPerToken = 2;
  std::string buildId;         // hex; every shard carries it
  std::string corpusPath;
  int64_t preparedAtNs = 0;    // when the sources were last checked (racy-mtime guard)
  uint64_t inputBytes = 0;
  std::vector<StoreSource> sources;
  std::vector<StoreShard> shards;
  SkippedInput skipped;
  uint64_t tokens() const;

  nlohmann::json toJson() const;
  /// Throws DataError when malformed, StaleStoreError for an index of version 1.
  static StoreIndex fromJson(const nlohmann::json& j);
};

/// Reads `dir`/index.json; nullopt-like empty pointer when absent; throws DataError if corrupt.
std::unique_ptr<StoreIndex> readStoreIndex(const std::string& dir);
/// Writes `dir`/index.json atomically (temp file, then rename).
void writeStoreIndex(const std::string& dir, const StoreIndex& index);

/// Maps the shards of a complete store; checks every shard's header, size and identity
/// against the index. Throws DataError naming the shard and what is wrong.
std::shared_ptr<MappedTokens> openTokenStore(const std::string& dir);
/// True when `dir` holds a token store index.
bool isTokenStore(const std::string& dir);

/// Maps one token file: a DepthLab shard, llm.c's .bin (header) or nanoGPT's .bin (raw uint16).
/// Throws DataError for truncated, empty or foreign files.
MappedTokens::Segment openTokenFileSegment(const std::string& path, int* vocab);
/// True for a folder whose files are all token files (.bin, .dltok: nanoGPT's fineweb shards).
bool holdsOnlyTokenFiles(const std::string& path);
/// Maps token files as one stream (a .bin, a shard, or a folder of only them, sorted by name).
std::shared_ptr<MappedTokens> openTokenFiles(const std::string& path);

/// The header of the shard file at `path`; throws DataError when it is missing, not a shard,
/// or truncated / longer than its header says.
ShardHeader readShardHeader(const std::string& path);

/// Writes one shard: header, then tokens appended in pieces; finish() patches the count.
class ShardWriter {
 public:
  ShardWriter(const std::string& path, const ShardHeader& header);
  ~ShardWriter();
  /// Appends tokens; throws DataError for an id >= vocab or a write error (disk full).
  void append(const int32_t* tokens, size_t n);
  /// Appends `n` tokens already encoded at this shard's width (encodeTokens).
  void appendEncoded(const char* bytes, size_t n);
  uint64_t count() const { return m_header.count; }
  /// StreamHash of the token bytes appended so far (what StoreShard::hash records).
  uint64_t contentHash() const { return m_hash.digest(); }
  /// Writes the final header, flushes and closes; the shard is then complete.
  void finish();

 private:
  void writeHeader();
  std::string m_path;
  std::FILE* m_file = nullptr;
  ShardHeader m_header;
  util::StreamHash m_hash;
};

/// `n` ids as little-endian values of `bytesPerToken` bytes into `out`; throws DataError for an
/// id outside [0, vocab).
void encodeTokens(const int32_t* tokens, size_t n, uint32_t bytesPerToken, uint32_t vocab,
                  std::string& out);
/// 1, 2 or 4: the width a vocabulary of `vocab` pieces needs.
int bytesPerTokenFor(int vocab);
const char* dtypeName(int bytesPerToken);  // uint8, uint16, uint32

std::string shardFileName(uint64_t number);
/// The fixed hash that stands for the byte tokenizer.
uint64_t byteTokenizerHash();

}  // namespace depthlab::data

// The files of a corpus and how to read them as a byte stream. A corpus path is a file or a
// folder (walked recursively, sorted by path, hidden files and DepthLab's own caches left
// out). Each file is plain text or JSON Lines, optionally compressed with gzip (.gz) or
// zstd (.zst); SourceReader hands out its decompressed bytes in pieces and hashes the bytes on
// disk as it goes. Nothing here tokenizes or splits into chunks (corpus_chunker).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace depthlab::data {

enum class SourceFormat { Text, Jsonl };
enum class Compression { None, Gzip, Zstd };

struct SourceFile {
  std::string path;      // as opened
  std::string relative;  // relative to the corpus folder; "" for a single file
  uint64_t size = 0;     // bytes on disk
  int64_t mtimeNs = 0;
  SourceFormat format = SourceFormat::Text;
  Compression compression = Compression::None;
};

/// Throws DataError unless `path` is a regular file or a folder (a FIFO, socket or device as
/// corpus would block or never end).
void requireCorpusFileOrFolder(const std::string& path);

/// The files of `corpusPath`; throws DataError for a missing path or a folder without files.
std::vector<SourceFile> listCorpusSources(const std::string& corpusPath);
/// Format and compression from a file name (x.jsonl.zst, x.txt.gz, x.json, x.txt ...).
void classifySource(const std::string& name, SourceFormat& format, Compression& compression);
/// True when this build reads `c` (gzip needs zlib, zstd needs libzstd at build time).
bool compressionSupported(Compression c);
/// True for names DepthLab writes beside a corpus (token stores, tokenizer models).
bool isDepthLabCacheName(const std::string& name);

class SourceReader {
 public:
  virtual ~SourceReader() = default;
  /// Up to `n` decompressed bytes into `out`; 0 at the end. Throws DataError for a read or
  /// decompression error, naming the file.
  virtual size_t read(char* out, size_t n) = 0;
  /// Bytes of the file on disk consumed so far (for progress).
  virtual uint64_t rawBytes() const = 0;
  /// StreamHash of the bytes on disk consumed so far (whole file once read() returned 0).
  virtual uint64_t rawHash() const = 0;
};

std::unique_ptr<SourceReader> openSource(const SourceFile& file);

}  // namespace depthlab::data

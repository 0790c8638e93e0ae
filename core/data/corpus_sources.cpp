// See corpus_sources.h.
#include "data/corpus_sources.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#ifndef DEPTHLAB_WITH_ZLIB
#define DEPTHLAB_WITH_ZLIB 0
#endif
#ifndef DEPTHLAB_WITH_ZSTD
#define DEPTHLAB_WITH_ZSTD 0
#endif
#if DEPTHLAB_WITH_ZLIB
#include <zlib.h>
#endif
#if DEPTHLAB_WITH_ZSTD
#include <zstd.h>
#endif

#include "data/corpus.h"
#include "util/stream_hash.h"

namespace depthlab::data {

namespace fs = std::filesystem;

namespace {

bool endsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

int64_t mtimeNs(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

SourceFile describe(const fs::path& p, const std::string& relative) {
  SourceFile f;
  f.path = p.string();
  f.relative = relative;
  std::error_code ec;
  f.size = fs::file_size(p, ec);
  f.mtimeNs = mtimeNs(f.path);
  classifySource(p.filename().string(), f.format, f.compression);
  return f;
}

// Raw bytes of a file, hashed as they are read.
class RawFile {
 public:
  explicit RawFile(const std::string& path) : m_path(path) {
    m_file = std::fopen(path.c_str(), "rb");
    if (!m_file) throw DataError("cannot read corpus file '" + path + "': " + std::strerror(errno));
  }
  ~RawFile() { std::fclose(m_file); }
  size_t read(char* out, size_t n) {
    const size_t got = std::fread(out, 1, n, m_file);
    if (got < n && std::ferror(m_file)) throw DataError("error reading corpus file '" + m_path + "'");
    m_hash.update(out, got);
    m_bytes += got;
    return got;
  }
  uint64_t bytes() const { return m_bytes; }
  uint64_t hash() const { return m_hash.digest(); }
  const std::string& path() const { return m_path; }

 private:
  std::string m_path;
  std::FILE* m_file = nullptr;
  util::StreamHash m_hash;
  uint64_t m_bytes = 0;
};

class PlainReader : public SourceReader {
 public:
  explicit PlainReader(const std::string& path) : m_raw(path) {}
  size_t read(char* out, size_t n) override { return m_raw.read(out, n); }
  uint64_t rawBytes() const override { return m_raw.bytes(); }
  uint64_t rawHash() const override { return m_raw.hash(); }

 private:
  RawFile m_raw;
};

#if DEPTHLAB_WITH_ZLIB
// gzip (any number of concatenated members, as pigz and `cat a.gz b.gz` make).
class GzipReader : public SourceReader {
 public:
  explicit GzipReader(const std::string& path) : m_raw(path), m_in(1 << 20) {
    std::memset(&m_z, 0, sizeof(m_z));
    if (inflateInit2(&m_z, 15 + 32) != Z_OK) throw DataError("zlib could not start for '" + path + "'");
  }
  ~GzipReader() override { inflateEnd(&m_z); }
  size_t read(char* out, size_t n) override {
    m_z.next_out = reinterpret_cast<Bytef*>(out);
    m_z.avail_out = static_cast<uInt>(n);
    while (m_z.avail_out == n) {
      if (m_z.avail_in == 0) {
        const size_t got = m_raw.read(m_in.data(), m_in.size());
        if (got == 0) {
          if (!m_atMemberEnd) throw DataError("gzip file '" + m_raw.path() + "' is truncated");
          break;
        }
        m_z.next_in = reinterpret_cast<Bytef*>(m_in.data());
        m_z.avail_in = static_cast<uInt>(got);
      }
      m_atMemberEnd = false;
      const int rc = inflate(&m_z, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        m_atMemberEnd = true;
        inflateReset(&m_z);
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        throw DataError("gzip file '" + m_raw.path() + "' is damaged: " +
                        (m_z.msg ? m_z.msg : "inflate error " + std::to_string(rc)));
      }
    }
    return n - m_z.avail_out;
  }
  uint64_t rawBytes() const override { return m_raw.bytes(); }
  uint64_t rawHash() const override { return m_raw.hash(); }

 private:
  RawFile m_raw;
  std::vector<char> m_in;
  z_stream m_z;
  bool m_atMemberEnd = true;
};
#endif

#if DEPTHLAB_WITH_ZSTD
class ZstdReader : public SourceReader {
 public:
  explicit ZstdReader(const std::string& path) : m_raw(path), m_in(ZSTD_DStreamInSize()) {
    m_ds = ZSTD_createDStream();
    if (!m_ds) throw DataError("zstd could not start for '" + path + "'");
    ZSTD_initDStream(m_ds);
  }
  ~ZstdReader() override { ZSTD_freeDStream(m_ds); }
  size_t read(char* out, size_t n) override {
    ZSTD_outBuffer ob{out, n, 0};
    while (ob.pos == 0) {
      if (m_ib.pos == m_ib.size) {
        const size_t got = m_raw.read(m_in.data(), m_in.size());
        if (got == 0) {
          if (m_pending) throw DataError("zstd file '" + m_raw.path() + "' is truncated");
          break;
        }
        m_ib = ZSTD_inBuffer{m_in.data(), got, 0};
      }
      const size_t rc = ZSTD_decompressStream(m_ds, &ob, &m_ib);
      if (ZSTD_isError(rc)) {
        throw DataError("zstd file '" + m_raw.path() + "' is damaged: " + ZSTD_getErrorName(rc));
      }
      m_pending = rc != 0;
    }
    return ob.pos;
  }
  uint64_t rawBytes() const override { return m_raw.bytes(); }
  uint64_t rawHash() const override { return m_raw.hash(); }

 private:
  RawFile m_raw;
  std::vector<char> m_in;
  ZSTD_inBuffer m_ib{nullptr, 0, 0};
  ZSTD_DStream* m_ds = nullptr;
  bool m_pending = false;
};
#endif

}  // namespace

void classifySource(const std::string& nameIn, SourceFormat& format, Compression& compression) {
  std::string name = nameIn;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  compression = Compression::None;
  if (endsWith(name, ".gz")) {
    compression = Compression::Gzip;
    name.resize(name.size() - 3);
  } else if (endsWith(name, ".zst") || endsWith(name, ".zstd")) {
    compression = Compression::Zstd;
    name.resize(name.rfind('.'));
  }
  format = endsWith(name, ".jsonl") || endsWith(name, ".json") || endsWith(name, ".ndjson")
               ? SourceFormat::Jsonl
               : SourceFormat::Text;
}

bool compressionSupported(Compression c) {
  switch (c) {
    case Compression::None: return true;
    case Compression::Gzip: return DEPTHLAB_WITH_ZLIB;
    case Compression::Zstd: return DEPTHLAB_WITH_ZSTD;
  }
  return false;
}

bool isDepthLabCacheName(const std::string& name) {
  return endsWith(name, ".dlstore") || endsWith(name, ".model") || endsWith(name, ".vocab") ||
         endsWith(name, ".tokens") || endsWith(name, ".dltok") || endsWith(name, ".corpus.txt") ||
         endsWith(name, ".sample.txt") || endsWith(name, ".tmp");
}

void requireCorpusFileOrFolder(const std::string& path) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) throw DataError("corpus '" + path + "' does not exist");
  if (fs::is_regular_file(status) || fs::is_directory(status)) return;
  throw DataError("corpus '" + path + "' is not a file or a folder (" +
                  (fs::is_fifo(status) ? std::string("a FIFO") : std::string("a device or socket")) +
                  "): give a text file, a folder, .jsonl records, a token store or .bin tokens");
}

std::vector<SourceFile> listCorpusSources(const std::string& corpusPath) {
  std::error_code ec;
  if (corpusPath.empty()) throw DataError("no corpus given");
  requireCorpusFileOrFolder(corpusPath);
  std::vector<SourceFile> out;
  if (!fs::is_directory(corpusPath, ec)) {
    out.push_back(describe(corpusPath, ""));
    return out;
  }
  const fs::path root(corpusPath);
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.' || isDepthLabCacheName(name)) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec)) out.push_back(describe(it->path(), fs::relative(it->path(), root, ec).string()));
  }
  std::sort(out.begin(), out.end(),
            [](const SourceFile& a, const SourceFile& b) { return a.relative < b.relative; });
  if (out.empty()) throw DataError("corpus folder '" + corpusPath + "' holds no files");
  return out;
}

std::unique_ptr<SourceReader> openSource(const SourceFile& file) {
  switch (file.compression) {
    case Compression::None: return std::make_unique<PlainReader>(file.path);
#if DEPTHLAB_WITH_ZLIB
    case Compression::Gzip: return std::make_unique<GzipReader>(file.path);
#endif
#if DEPTHLAB_WITH_ZSTD
    case Compression::Zstd: return std::make_unique<ZstdReader>(file.path);
#endif
    default: break;
  }
  throw DataError("'" + file.path + "' is " +
                  (file.compression == Compression::Gzip ? std::string("gzip") : std::string("zstd")) +
                  "-compressed, and this build of DepthLab was made without " +
                  (file.compression == Compression::Gzip ? "zlib (apt-get install zlib1g-dev)"
                                                         : "libzstd (apt-get install libzstd-dev)") +
                  "; decompress it first or rebuild");
}

}  // namespace depthlab::data

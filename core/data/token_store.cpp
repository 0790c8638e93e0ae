// See token_store.h.
#include "data/token_store.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "data/corpus.h"
#include "util/content_hash.h"
#include "util/paths.h"

namespace depthlab::data {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int32_t kLlmcMagic = 20240520;

void put32(unsigned char* p, uint32_t v) { std::memcpy(p, &v, 4); }
void put64(unsigned char* p, uint64_t v) { std::memcpy(p, &v, 8); }
uint32_t get32(const unsigned char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
uint64_t get64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

uint64_t parseHex(const std::string& s) { return s.empty() ? 0 : std::stoull(s, nullptr, 16); }

// The largest id of `count` uint16 tokens (nanoGPT / llm.c files carry no vocabulary).
int maxToken16(const unsigned char* p, uint64_t count) {
  uint16_t hi = 0;
  for (uint64_t i = 0; i < count; ++i) {
    uint16_t v;
    std::memcpy(&v, p + 2 * i, 2);
    hi = std::max(hi, v);
  }
  return hi;
}

ShardHeader parseShardHeader(const MappedFile& f) {
  const std::string& path = f.path();
  if (f.size() < kShardHeaderBytes || std::memcmp(f.data(), kShardMagic, 8) != 0) {
    throw DataError("'" + path + "' is not a DepthLab token shard (no DLTSHARD header)");
  }
  const unsigned char* p = f.data();
  if (get32(p + 8) != kShardVersion) {
    throw DataError("token shard '" + path + "' has format version " + std::to_string(get32(p + 8)) +
                    "; this DepthLab reads version " + std::to_string(kShardVersion) +
                    " (prepare the corpus again)");
  }
  ShardHeader h;
  h.bytesPerToken = get32(p + 12);
  h.vocab = get32(p + 16);
  h.count = get64(p + 24);
  h.tokenizerHash = get64(p + 32);
  h.buildId = get64(p + 40);
  h.shardNumber = get64(p + 48);
  if (h.bytesPerToken != 1 && h.bytesPerToken != 2 && h.bytesPerToken != 4) {
    throw DataError("token shard '" + path + "' stores " + std::to_string(h.bytesPerToken) +
                    "-byte tokens (only 1, 2 and 4 exist): the file is damaged");
  }
  // (count compared by division: a damaged count times the width could overflow to a match)
  const uint64_t payload = f.size() - kShardHeaderBytes;
  const bool sizeMatches = payload % h.bytesPerToken == 0 && h.count == payload / h.bytesPerToken;
  const uint64_t expected = h.count <= (UINT64_MAX - kShardHeaderBytes) / h.bytesPerToken
                                ? kShardHeaderBytes + h.count * h.bytesPerToken
                                : UINT64_MAX;
  if (!sizeMatches) {
    throw DataError("token shard '" + path + "' is " +
                    (f.size() < expected ? std::string("truncated") : std::string("longer than its header says")) +
                    ": its header says " + std::to_string(h.count) + " tokens (" +
                    std::to_string(expected) + " bytes), the file has " + std::to_string(f.size()) +
                    " bytes; prepare the corpus again (depthlab-cli corpus prepare)");
  }
  return h;
}

}  // namespace

std::string SkippedInput::summary() const {
  std::string s;
  auto add = [&](uint64_t n, const std::string& what) {
    if (n == 0) return;
    s += (s.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  };
  add(linesWithoutText, "jsonl line(s) without a string \"text\"");
  add(invalidJsonLines, "jsonl line(s) that are not JSON objects");
  add(invalidUtf8Lines, "text(s) with invalid UTF-8");
  add(binaryFiles.size(), "binary file(s)");
  return s;
}

uint64_t StoreIndex::tokens() const {
  uint64_t n = 0;
  for (const auto& s : shards) n += s.tokens;
  return n;
}

json StoreIndex::toJson() const {
  json j;
  j["format"] = "depthlab-token-store";
  j["version"] = kStoreIndexVersion;
  j["complete"] = complete;
  j["tokenizer"] = tokenizerSpec;
  j["tokenizerName"] = tokenizerName;
  j["tokenizerHash"] = tokenizerHash;
  j["vocab"] = vocab;
  j["eod"] = eod;
  j["dtype"] = dtypeName(bytesPerToken);
  j["buildId"] = buildId;
  j["corpus"] = corpusPath;
  j["preparedAtNs"] = preparedAtNs;
  j["inputBytes"] = inputBytes;
  j["tokens"] = tokens();
  json src = json::array();
  for (const auto& s : sources) {
    src.push_back({{"path", s.path}, {"size", s.size}, {"mtimeNs", s.mtimeNs}, {"hash", s.hash}});
  }
  j["sources"] = src;
  json sh = json::array();
  for (const auto& s : shards) {
    sh.push_back({{"file", s.file}, {"tokens", s.tokens}, {"endChunk", s.endChunk}, {"hash", s.hash}});
  }
  j["shards"] = sh;
  j["skipped"] = {{"linesWithoutText", skipped.linesWithoutText},
                  {"invalidJsonLines", skipped.invalidJsonLines},
                  {"invalidUtf8Lines", skipped.invalidUtf8Lines},
                  {"binaryFiles", skipped.binaryFiles}};
  return j;
}

StoreIndex StoreIndex::fromJson(const json& j) {
  try {
    if (j.value("format", "") != "depthlab-token-store") throw DataError("not a token store index");
    const int version = j.at("version").get<int>();
    if (version < kStoreIndexVersion) {
      const std::string why = "it was made by an earlier DepthLab (store version " +
                              std::to_string(version) + ") whose stores ran documents into each "
                              "other; stores now put an end-of-document token between documents";
      throw StaleStoreError(why, why);
    }
    if (version != kStoreIndexVersion) {
      throw DataError("token store index version " + std::to_string(version) +
                      " (this DepthLab reads " + std::to_string(kStoreIndexVersion) + ")");
    }
    StoreIndex x;
    x.complete = j.at("complete").get<bool>();
    x.tokenizerSpec = j.at("tokenizer").get<std::string>();
    x.tokenizerName = j.at("tokenizerName").get<std::string>();
    x.tokenizerHash = j.at("tokenizerHash").get<std::string>();
    x.vocab = j.at("vocab").get<int>();
    x.eod = j.at("eod").get<int>();
    const std::string dtype = j.at("dtype").get<std::string>();
    x.bytesPerToken = dtype == "uint8" ? 1 : dtype == "uint32" ? 4 : 2;
    x.buildId = j.at("buildId").get<std::string>();
    x.corpusPath = j.value("corpus", "");
    x.preparedAtNs = j.value("preparedAtNs", int64_t{0});
    x.inputBytes = j.value("inputBytes", uint64_t{0});
    for (const auto& s : j.at("sources")) {
      x.sources.push_back({s.at("path").get<std::string>(), s.at("size").get<uint64_t>(),
                           s.at("mtimeNs").get<int64_t>(), s.at("hash").get<std::string>()});
    }
    for (const auto& s : j.at("shards")) {
      x.shards.push_back({s.at("file").get<std::string>(), s.at("tokens").get<uint64_t>(),
                          s.at("endChunk").get<uint64_t>(), s.value("hash", std::string())});
    }
    if (j.contains("skipped")) {
      const auto& k = j["skipped"];
      x.skipped.linesWithoutText = k.value("linesWithoutText", uint64_t{0});
      x.skipped.invalidJsonLines = k.value("invalidJsonLines", uint64_t{0});
      x.skipped.invalidUtf8Lines = k.value("invalidUtf8Lines", uint64_t{0});
      x.skipped.binaryFiles = k.value("binaryFiles", std::vector<std::string>{});
    }
    return x;
  } catch (const json::exception& e) {
    throw DataError(std::string("malformed token store index: ") + e.what());
  }
}

std::unique_ptr<StoreIndex> readStoreIndex(const std::string& dir) {
  const fs::path p = fs::path(dir) / kStoreIndexName;
  std::error_code ec;
  if (!fs::exists(p, ec)) return nullptr;
  std::ifstream in(p);
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded()) throw DataError("token store index '" + p.string() + "' is not valid JSON");
  try {
    return std::make_unique<StoreIndex>(StoreIndex::fromJson(j));
  } catch (const StaleStoreError& e) {
    throw StaleStoreError("the token store '" + dir + "' is out of date: " + e.reason(), e.reason());
  } catch (const DataError& e) {
    throw DataError("'" + p.string() + "': " + e.what());
  }
}

void writeStoreIndex(const std::string& dir, const StoreIndex& index) {
  const fs::path p = fs::path(dir) / kStoreIndexName;
  // One temporary name per writer: the ranks of a data-parallel run all refresh the index.
  const std::string tmp = util::writerTempPath(p.string());
  {
    std::ofstream out(tmp);
    out << index.toJson().dump(1) << "\n";
    out.flush();
    if (!out) {
      out.close();
      std::error_code ec;
      fs::remove(tmp, ec);
      throw DataError("cannot write the token store index '" + tmp + "' (disk full?)");
    }
  }
  std::error_code ec;
  fs::rename(tmp, p, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(tmp, ec);
    throw DataError("cannot write the token store index '" + p.string() + "': " + why);
  }
}

bool isTokenStore(const std::string& dir) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(dir) / kStoreIndexName, ec);
}

ShardHeader readShardHeader(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw DataError("token shard '" + path + "' is missing");
  MappedFile f(path);
  return parseShardHeader(f);
}

std::shared_ptr<MappedTokens> openTokenStore(const std::string& dir) {
  auto index = readStoreIndex(dir);
  if (!index) throw DataError("'" + dir + "' holds no token store (no " + kStoreIndexName + ")");
  if (!index->complete) {
    throw DataError("the token store '" + dir + "' is incomplete (its preparation was interrupted); "
                    "run depthlab-cli corpus prepare again to finish it");
  }
  if (index->shards.empty()) throw DataError("the token store '" + dir + "' holds no tokens");
  std::vector<MappedTokens::Segment> segments;
  const uint64_t build = parseHex(index->buildId), tok = parseHex(index->tokenizerHash);
  for (size_t i = 0; i < index->shards.size(); ++i) {
    const auto& s = index->shards[i];
    MappedFile f((fs::path(dir) / s.file).string());
    const ShardHeader h = parseShardHeader(f);
    if (h.buildId != build || h.tokenizerHash != tok || h.shardNumber != i) {
      throw DataError("token shard '" + f.path() + "' belongs to another preparation (build, "
                      "tokenizer or position differ from the store's index); prepare the corpus again");
    }
    // Each disagreement said in its own terms (a vocabulary mismatch had read "12601 tokens,
    // index says 12601").
    std::string what;
    if (h.count != s.tokens) {
      what = std::to_string(h.count) + " tokens, the index says " + std::to_string(s.tokens);
    } else if (static_cast<int>(h.vocab) != index->vocab) {
      what = "a vocabulary of " + std::to_string(h.vocab) + " ids, the index says " +
             std::to_string(index->vocab);
    } else if (static_cast<int>(h.bytesPerToken) != index->bytesPerToken) {
      what = std::to_string(h.bytesPerToken) + "-byte tokens, the index says " +
             std::to_string(index->bytesPerToken);
    }
    if (!what.empty()) {
      throw DataError("token shard '" + f.path() + "' does not match the store's index (" + what +
                      "); prepare the corpus again (depthlab-cli corpus prepare)");
    }
    f.adviseRandom();
    segments.push_back({std::move(f), kShardHeaderBytes, h.count, static_cast<int>(h.bytesPerToken)});
  }
  return std::make_shared<MappedTokens>(std::move(segments), index->vocab);
}

MappedTokens::Segment openTokenFileSegment(const std::string& path, int* vocab) {
  MappedFile f(path);
  MappedTokens::Segment seg;
  if (f.size() >= 8 && std::memcmp(f.data(), kShardMagic, 8) == 0) {
    const ShardHeader h = parseShardHeader(f);
    seg = {std::move(f), kShardHeaderBytes, h.count, static_cast<int>(h.bytesPerToken)};
    if (vocab) *vocab = static_cast<int>(h.vocab);
  } else {
    size_t offset = 0;
    uint64_t count = f.size() / 2;
    if (f.size() >= 1024 && static_cast<int32_t>(get32(f.data())) == kLlmcMagic) {
      const int32_t version = static_cast<int32_t>(get32(f.data() + 4));
      if (version != 1) {
        throw DataError("token file '" + path + "' has llm.c version " + std::to_string(version) +
                        " (only version 1, uint16, is supported)");
      }
      offset = 1024;
      count = get32(f.data() + 8);
      if (offset + count * 2 > f.size()) {
        throw DataError("token file '" + path + "' is truncated: its llm.c header says " +
                        std::to_string(count) + " tokens, the file holds " +
                        std::to_string((f.size() - offset) / 2));
      }
    } else if (f.size() % 2 != 0) {
      throw DataError("token file '" + path + "' has an odd number of bytes (" +
                      std::to_string(f.size()) + "): not uint16 tokens, or truncated");
    }
    if (vocab) *vocab = maxToken16(f.data() + offset, count) + 1;
    seg = {std::move(f), offset, count, 2};
  }
  if (seg.count == 0) throw DataError("token file '" + path + "' holds no tokens");
  seg.file.adviseRandom();
  return seg;
}

namespace {
bool isTokenFileName(const std::string& name) {
  return isTokenFile(name) || (name.size() > 6 && name.compare(name.size() - 6, 6, ".dltok") == 0);
}

// The token files of a folder, sorted; empty when any other (visible) file is there too.
std::vector<std::string> tokenFilesOnlyIn(const std::string& dir) {
  std::error_code ec;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.' || !e.is_regular_file(ec)) continue;
    if (!isTokenFileName(name)) return {};
    files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}
}  // namespace

bool holdsOnlyTokenFiles(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && !tokenFilesOnlyIn(path).empty();
}

std::shared_ptr<MappedTokens> openTokenFiles(const std::string& path) {
  std::error_code ec;
  std::vector<std::string> files;
  if (fs::is_directory(path, ec)) {
    files = tokenFilesOnlyIn(path);
    if (files.empty()) throw DataError("'" + path + "' does not hold only .bin / .dltok token files");
  } else {
    files.push_back(path);
  }
  std::vector<MappedTokens::Segment> segments;
  int vocab = 0;
  for (const auto& f : files) {
    int v = 0;
    segments.push_back(openTokenFileSegment(f, &v));
    vocab = std::max(vocab, v);
  }
  return std::make_shared<MappedTokens>(std::move(segments), vocab);
}

ShardWriter::ShardWriter(const std::string& path, const ShardHeader& header)
    : m_path(path), m_header(header) {
  m_header.count = 0;
  m_file = std::fopen(path.c_str(), "wb");
  if (!m_file) throw DataError("cannot write token shard '" + path + "': " + std::strerror(errno));
  writeHeader();
}

ShardWriter::~ShardWriter() {
  if (m_file) std::fclose(m_file);
}

void ShardWriter::writeHeader() {
  unsigned char h[kShardHeaderBytes] = {};
  std::memcpy(h, kShardMagic, 8);
  put32(h + 8, kShardVersion);
  put32(h + 12, m_header.bytesPerToken);
  put32(h + 16, m_header.vocab);
  put64(h + 24, m_header.count);
  put64(h + 32, m_header.tokenizerHash);
  put64(h + 40, m_header.buildId);
  put64(h + 48, m_header.shardNumber);
  if (std::fseek(m_file, 0, SEEK_SET) != 0 || std::fwrite(h, 1, sizeof(h), m_file) != sizeof(h)) {
    throw DataError("cannot write token shard '" + m_path + "' (disk full?)");
  }
  std::fseek(m_file, 0, SEEK_END);
}

void ShardWriter::append(const int32_t* tokens, size_t n) {
  std::string encoded;
  encodeTokens(tokens, n, m_header.bytesPerToken, m_header.vocab, encoded);
  appendEncoded(encoded.data(), n);
}

void ShardWriter::appendEncoded(const char* bytes, size_t n) {
  const size_t size = n * m_header.bytesPerToken;
  if (size > 0 && std::fwrite(bytes, 1, size, m_file) != size) {
    throw DataError("cannot write token shard '" + m_path + "' (disk full?)");
  }
  m_hash.update(bytes, size);
  m_header.count += n;
}

void encodeTokens(const int32_t* tokens, size_t n, uint32_t bytesPerToken, uint32_t vocab,
                  std::string& out) {
  out.resize(n * bytesPerToken);
  auto* p = reinterpret_cast<unsigned char*>(&out[0]);
  for (size_t i = 0; i < n; ++i) {
    const int32_t t = tokens[i];
    if (t < 0 || static_cast<uint32_t>(t) >= vocab) {
      throw DataError("token id " + std::to_string(t) + " is outside the vocabulary (size " +
                      std::to_string(vocab) + ")");
    }
    const uint32_t v = static_cast<uint32_t>(t);
    if (bytesPerToken == 1) {
      p[i] = static_cast<unsigned char>(v);
    } else if (bytesPerToken == 2) {
      const uint16_t h = static_cast<uint16_t>(v);
      std::memcpy(p + 2 * i, &h, 2);
    } else {
      std::memcpy(p + 4 * i, &v, 4);
    }
  }
}

int bytesPerTokenFor(int vocab) { return vocab <= 256 ? 1 : vocab <= 65536 ? 2 : 4; }

const char* dtypeName(int bytesPerToken) {
  return bytesPerToken == 1 ? "uint8" : bytesPerToken == 2 ? "uint16" : "uint32";
}

void ShardWriter::finish() {
  writeHeader();
  if (std::fflush(m_file) != 0 || std::fclose(m_file) != 0) {
    m_file = nullptr;
    throw DataError("cannot write token shard '" + m_path + "' (disk full?)");
  }
  m_file = nullptr;
}

std::string shardFileName(uint64_t number) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "shard-%06llu.dltok", static_cast<unsigned long long>(number));
  return buf;
}

uint64_t byteTokenizerHash() { return util::fnv1a("depthlab byte tokenizer v1"); }

}  // namespace depthlab::data

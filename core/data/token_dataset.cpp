// TokenDataset and corpus loading; see token_dataset.h.
#include "data/token_dataset.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "data/corpus.h"
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

constexpr char kTokenMagic[8] = {'D', 'L', 'T', 'O', 'K', 'E', 'N', 'S'};
constexpr uint32_t kTokenVersion = 2;

// Cached token file: magic, version, vocab, count, source key, then uint32 tokens. The source
// key hashes the text's bytes and the tokenizer model's bytes: any edit re-encodes.
bool readTokenCache(const std::string& path, uint64_t sourceSize, std::vector<int32_t>& out,
                    int& vocab) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  char magic[8];
  uint32_t version = 0, v = 0;
  uint64_t count = 0, size = 0;
  in.read(magic, 8);
  in.read(reinterpret_cast<char*>(&version), 4);
  in.read(reinterpret_cast<char*>(&v), 4);
  in.read(reinterpret_cast<char*>(&count), 8);
  in.read(reinterpret_cast<char*>(&size), 8);
  if (!in || std::memcmp(magic, kTokenMagic, 8) != 0 || version != kTokenVersion ||
      size != sourceSize || count == 0 || count > (1ull << 34)) {
    return false;  // stale or foreign: re-encode
  }
  out.resize(count);
  in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(count * 4));
  vocab = static_cast<int>(v);
  return static_cast<bool>(in);
}

void writeTokenCache(const std::string& path, uint64_t sourceSize, const std::vector<int32_t>& t,
                     int vocab) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    uint32_t version = kTokenVersion, v = static_cast<uint32_t>(vocab);
    uint64_t count = t.size();
    out.write(kTokenMagic, 8);
    out.write(reinterpret_cast<const char*>(&version), 4);
    out.write(reinterpret_cast<const char*>(&v), 4);
    out.write(reinterpret_cast<const char*>(&count), 8);
    out.write(reinterpret_cast<const char*>(&sourceSize), 8);
    out.write(reinterpret_cast<const char*>(t.data()), static_cast<std::streamsize>(t.size() * 4));
    if (!out) return;  // a cache we cannot write is not an error
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
}

}  // namespace

TokenDataset::TokenDataset(std::vector<int32_t> tokens, int vocabSize, double valFraction,
                           int seqLen, int batchSize)
    : m_tokens(std::move(tokens)), m_vocab(vocabSize), m_seqLen(seqLen), m_batch(batchSize) {
  const size_t n = m_tokens.size();
  m_split = n - static_cast<size_t>(static_cast<double>(n) * valFraction);
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
  for (int32_t t : m_tokens) {
    if (t < 0 || t >= vocabSize) {
      throw DataError("token id " + std::to_string(t) + " is outside the vocabulary (size " +
                      std::to_string(vocabSize) + ")");
    }
  }
}

TokenBatch TokenDataset::window(const std::vector<size_t>& starts) const {
  TokenBatch b;
  b.batch = static_cast<int>(starts.size());
  b.seqLen = m_seqLen;
  const size_t T = static_cast<size_t>(m_seqLen);
  b.inputs.resize(starts.size() * T);
  b.targets.resize(starts.size() * T);
  for (size_t r = 0; r < starts.size(); ++r) {
    for (size_t t = 0; t < T; ++t) {
      b.inputs[r * T + t] = m_tokens[starts[r] + t];
      b.targets[r * T + t] = m_tokens[starts[r] + t + 1];
    }
  }
  return b;
}

TokenBatch TokenDataset::trainBatch(int64_t seed, int64_t step, int micro) const {
  const size_t range = m_split - static_cast<size_t>(m_seqLen);  // starts in [0, range)
  std::vector<size_t> starts(static_cast<size_t>(m_batch));
  uint64_t state = splitmix64(static_cast<uint64_t>(seed) * 0x100000001B3ull ^
                              splitmix64(static_cast<uint64_t>(step) * 1315423911ull +
                                         static_cast<uint64_t>(micro)));
  for (auto& s : starts) {
    state = splitmix64(state);
    s = static_cast<size_t>(state % range);
  }
  return window(starts);
}

TokenBatch TokenDataset::valBatch(int i, int nBatches) const {
  const size_t valLen = m_tokens.size() - m_split;
  const size_t span = valLen - static_cast<size_t>(m_seqLen);  // starts in [split, split+span)
  const size_t total = static_cast<size_t>(nBatches) * static_cast<size_t>(m_batch);
  std::vector<size_t> starts(static_cast<size_t>(m_batch));
  for (size_t r = 0; r < starts.size(); ++r) {
    const size_t k = static_cast<size_t>(i) * static_cast<size_t>(m_batch) + r;
    starts[r] = m_split + (total > 1 ? span * k / total : 0);
  }
  return window(starts);
}

TokenBatch TokenDataset::probeBatch(int rows) const {
  const size_t span = m_tokens.size() - m_split - static_cast<size_t>(m_seqLen);
  std::vector<size_t> starts(static_cast<size_t>(rows));
  for (size_t r = 0; r < starts.size(); ++r) {
    // Offset by half a stride so probe windows differ from the first validation windows.
    starts[r] = m_split + std::min(span, span * (2 * r + 1) / (2 * starts.size()));
  }
  return window(starts);
}

CorpusTokens loadCorpusTokens(const DataConfig& data,
                              const std::function<void(const std::string&)>& phase) {
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
  say("reading corpus " + ct.corpusPath);
  if (isTokenFile(ct.corpusPath)) {
    ct.tokens = readTokenFile(ct.corpusPath);
    ct.vocabSize = *std::max_element(ct.tokens.begin(), ct.tokens.end()) + 1;
    ct.tokenizerName = "pretokenized";
    return ct;
  }
  if (data.tokenizer == "byte") {
    ByteTokenizer byte;
    ct.tokens = byte.encode(readTextCorpus(ct.corpusPath));
    ct.vocabSize = byte.vocabSize();
    ct.tokenizerName = byte.name();
    return ct;
  }
  // SentencePiece: needs the corpus as one text file, then encodes it once into a cache.
  std::string textFile = ct.corpusPath;
  std::string text = readTextCorpus(ct.corpusPath);  // validates (missing/empty/binary)
  const std::string cacheDir = cacheDirFor(ct.corpusPath);
  if (fs::is_directory(ct.corpusPath)) {
    textFile = (fs::path(cacheDir) / (fs::path(ct.corpusPath).filename().string() +
                                      ".corpus.txt")).string();
    std::ofstream out(textFile, std::ios::binary);
    out << text;
  }
  say("preparing tokenizer " + data.tokenizer + " (SentencePiece trains once per corpus, then is cached)");
  auto tok = makeTokenizer(data.tokenizer, textFile);
  ct.tokenizerName = tok->name();
  ct.vocabSize = tok->vocabSize();
  auto* spm = dynamic_cast<SpmTokenizer*>(tok.get());
  std::string cache = (fs::path(cacheDir) / (fs::path(textFile).filename().string() + "." +
                                             fs::path(spm->modelPath()).stem().string() +
                                             ".tokens")).string();
  const uint64_t key = util::fnv1a(text, util::fnv1aFile(spm->modelPath()));
  int cachedVocab = 0;
  if (!readTokenCache(cache, key, ct.tokens, cachedVocab) || cachedVocab != ct.vocabSize) {
    say("encoding corpus with " + ct.tokenizerName);
    ct.tokens = spm->encodeFile(textFile);
    writeTokenCache(cache, key, ct.tokens, ct.vocabSize);
  }
  return ct;
}

}  // namespace depthlab::data

// See corpus_prepare.h. The threads are TokenizePipeline's; this file decides what to tokenize
// (reuse, resume, rebuild); ShardStream writes the pipeline's chunks, in order, into shards.
#include "data/corpus_prepare.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "data/corpus.h"
#include "data/corpus_chunker.h"
#include "data/shard_stream.h"
#include "data/store_check.h"
#include "data/tokenize_pipeline.h"
#include "data/tokenizer.h"
#include "util/content_hash.h"
#include "util/file_lock.h"
#include "util/paths.h"
#include "util/stream_hash.h"

namespace depthlab::data {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string bytesText(double b) {
  char buf[32];
  if (b >= 1e9) std::snprintf(buf, sizeof(buf), "%.2f GB", b / 1e9);
  else if (b >= 1e6) std::snprintf(buf, sizeof(buf), "%.1f MB", b / 1e6);
  else std::snprintf(buf, sizeof(buf), "%.0f kB", b / 1e3);
  return buf;
}

// Where caches of `corpus` go: beside it (a folder's caches beside the folder, never inside,
// where they would become part of the corpus), else the data cache.
std::string cacheDirBeside(const std::string& corpus) {
  fs::path p = fs::path(corpus).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  std::error_code ec;
  if (!fs::is_directory(p, ec)) return cacheDirFor(p.string());
  const fs::path parent = p.has_parent_path() ? p.parent_path() : fs::path(".");
  return cacheDirFor(parent.string());
}

bool isSpmVocabSpec(const std::string& spec) {
  return spec.rfind("spm:", 0) == 0 && spec.size() > 4 &&
         spec.find_first_not_of("0123456789", 4) == std::string::npos;
}

ResolvedTokenizer byteTokenizer() {
  return {"byte", byteTokenizerHash(), kByteVocab, kByteEodId, nullptr};
}

// What a store made with a SentencePiece model depends on: the model's bytes and the route,
// documents encoded whole (depthlab-spm-encode) or spm_encode's lines (newlines dropped; the
// hash stores had before whole documents).
uint64_t spmStoreHash(const std::string& model, bool wholeDocuments) {
  const uint64_t bytes = util::hashFile(model);
  if (!wholeDocuments) return bytes;
  util::StreamHash h(bytes);
  h.update("whole documents");
  return h.digest();
}

// Why a store of the model `model` made with `storedHash` is stale; "" when it is not. The
// hashes need no SentencePiece tools: a store is reused where they are not installed; where
// they are, a store made by the other route than this machine's is rebuilt, saying why.
std::string spmModelChange(const std::string& model, const std::string& storedHash) {
  const bool madeWhole = util::hex64(spmStoreHash(model, true)) == storedHash;
  if (!madeWhole && util::hex64(spmStoreHash(model, false)) != storedHash) {
    return "the SentencePiece model changed";
  }
  bool wholeHere = madeWhole;
  try {
    wholeHere = SpmTokenizer(model).encodesWholeDocuments();
  } catch (const DataError&) {  // no tools here: the store is read as it was made
    return "";
  }
  if (wholeHere == madeWhole) return "";
  return wholeHere ? "its documents were encoded line by line (spm_encode drops their newlines); "
                     "depthlab-spm-encode now encodes each document whole"
                   : "depthlab-spm-encode, which encoded its documents whole, is missing";
}

// The model's own end-of-sentence id ends documents; a model without one gets an id after
// its pieces.
ResolvedTokenizer spmFromModel(const std::string& model) {
  ResolvedTokenizer t;
  t.spm = std::make_unique<SpmTokenizer>(model);
  t.name = t.spm->name();
  t.vocab = t.spm->vocabSize();
  t.eod = t.spm->eosId();
  if (t.eod < 0) t.eod = t.vocab++;
  t.hash = spmStoreHash(model, t.spm->encodesWholeDocuments());
  return t;
}

// spm:N: a model trained on a sample of the corpus, cached by the sample's content.
ResolvedTokenizer trainSpmOnSample(const std::string& corpus, const std::string& spec,
                                   const PrepareOptions& o) {
  const int vocab = spmVocabSize(spec);
  if (!SpmTokenizer::toolsAvailable()) {
    throw DataError("SentencePiece tools not found: sudo apt-get install sentencepiece");
  }
  const std::string dir = cacheDirBeside(corpus);
  fs::path named = fs::path(corpus).lexically_normal();
  if (named.filename().empty()) named = named.parent_path();
  const std::string base = named.filename().string();
  const std::string sample = (fs::path(dir) / (base + ".sample.txt")).string();
  if (o.phase) o.phase("sampling " + std::to_string(o.sampleMB) + " MB of the corpus for the tokenizer");
  writeCorpusSample(corpus, static_cast<uint64_t>(o.sampleMB) * 1000000ull, sample);
  const std::string prefix = (fs::path(dir) / (base + ".spm" + std::to_string(vocab) + "-" +
                                               kSpmSettingsVersion + "-" +
                                               util::hex64(util::hashFile(sample)))).string();
  std::error_code ec;
  if (!fs::exists(prefix + ".model")) {
    if (o.phase) o.phase("training tokenizer " + spec + " (SentencePiece, once per corpus sample)");
    try {
      SpmTokenizer::train(sample, prefix, vocab);
    } catch (...) {
      fs::remove(sample, ec);  // a failed training leaves nothing behind
      throw;
    }
  }
  fs::remove(sample, ec);
  return spmFromModel(prefix + ".model");
}

// The build id: what the chunks and shards of a preparation depend on.
uint64_t buildIdOf(const std::string& spec, uint64_t tokHash, const std::vector<SourceFile>& src,
                   size_t chunkBytes, uint64_t shardTokens) {
  util::StreamHash h(tokHash);
  h.update(spec);
  for (const auto& s : src) {
    h.update(s.relative);
    h.update(&s.size, sizeof(s.size));
    h.update(&s.mtimeNs, sizeof(s.mtimeNs));
  }
  h.update(&chunkBytes, sizeof(chunkBytes));
  h.update(&shardTokens, sizeof(shardTokens));
  return h.digest();
}

bool sameStats(const StoreIndex& index, const std::vector<SourceFile>& now) {
  if (index.sources.size() != now.size()) return false;
  for (size_t i = 0; i < now.size(); ++i) {
    const auto& a = index.sources[i];
    if (a.path != now[i].relative || a.size != now[i].size || a.mtimeNs != now[i].mtimeNs) return false;
  }
  return true;
}

// "" when every source is as the index recorded it. A source whose time changed, or whose
// time is so close to the preparation that an edit in the same clock tick could hide, has its
// content hashed again (git's racy-index rule), and with `verify` every source; equal content
// keeps the store.
std::string sourcesChanged(StoreIndex& index, const std::vector<SourceFile>& now, bool& touched,
                           bool verify) {
  if (index.sources.size() != now.size()) return "the corpus's files changed (added or removed)";
  for (size_t i = 0; i < now.size(); ++i) {
    auto& a = index.sources[i];
    const auto& b = now[i];
    const std::string name = b.relative.empty() ? b.path : b.relative;
    if (a.path != b.relative) return "the corpus's files changed (" + name + ")";
    if (a.size != b.size) return name + " changed size";
    const bool racy = b.mtimeNs >= index.preparedAtNs - 2000000000ll;
    if (a.mtimeNs == b.mtimeNs && !racy && !verify) continue;
    if (a.hash.empty()) return name + (verify ? " has no recorded hash to verify" : " changed");
    if (util::hex64(util::hashFile(b.path)) != a.hash) return name + " changed content";
    if (a.mtimeNs != b.mtimeNs) {
      a.mtimeNs = b.mtimeNs;
      touched = true;
    }
  }
  return "";
}

void removeStoreFiles(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("shard-", 0) == 0 || name.rfind(kStoreIndexName, 0) == 0 ||
        name.rfind("chunk-", 0) == 0) {
      fs::remove(e.path(), ec);
    }
  }
}

}  // namespace

std::string formatProgress(const PrepareProgress& p) {
  char buf[256];
  const double frac = p.rawTotal ? static_cast<double>(p.rawDone) / static_cast<double>(p.rawTotal) : 0;
  const double rate = p.seconds > 0 ? static_cast<double>(p.rawDone) / p.seconds : 0;
  std::string eta = "";
  if (frac > 0.001 && frac < 1) {
    const double left = p.seconds * (1 - frac) / frac;
    char e[48];
    if (left >= 120) std::snprintf(e, sizeof(e), "  ETA %.0f min", left / 60);
    else std::snprintf(e, sizeof(e), "  ETA %.0f s", left);
    eta = e;
  }
  std::snprintf(buf, sizeof(buf), "tokenizing %3.0f%%  %s of %s  %s/s  %.1f M tokens  %zu shard%s%s",
                100 * frac, bytesText(static_cast<double>(p.rawDone)).c_str(),
                bytesText(static_cast<double>(p.rawTotal)).c_str(), bytesText(rate).c_str(),
                static_cast<double>(p.tokens) / 1e6, p.shards, p.shards == 1 ? "" : "s", eta.c_str());
  std::string s = buf;
  if (p.resumedShards) s += "  (resumed after " + std::to_string(p.resumedShards) + " shards)";
  return s;
}

std::string storeDirFor(const std::string& corpusPath, const std::string& tokenizer) {
  std::string tag = "byte";
  if (isSpmVocabSpec(tokenizer)) tag = "spm" + tokenizer.substr(4);
  else if (tokenizer.rfind("spm:", 0) == 0) tag = "spm-" + fs::path(tokenizer.substr(4)).stem().string();
  fs::path corpus = fs::path(corpusPath).lexically_normal();
  if (corpus.filename().empty()) corpus = corpus.parent_path();
  const std::string dir = cacheDirBeside(corpus.string());
  std::string name = corpus.filename().string() + "." + tag;
  // In the shared data cache (the corpus's folder is read-only) corpora of one file name from
  // different folders must not share a store: the name gets a hash of the corpus's path.
  std::error_code ec;
  if (fs::path(dir).lexically_normal() == (fs::path(util::dataDir()) / "cache").lexically_normal()) {
    name += "-" + util::hex64(util::fnv1a(fs::absolute(corpus, ec).string())).substr(0, 8);
  }
  return (fs::path(dir) / (name + ".dlstore")).string();
}

namespace {

// Step 1: true (and `r` filled) when the store at r.storeDir is complete and up to date.
// Otherwise r.rebuildReason says why not, and `old` keeps an interrupted preparation's index.
bool reuseStore(const std::string& spec, const std::vector<SourceFile>& sources,
                const PrepareOptions& o, std::unique_ptr<StoreIndex>& old, PrepareReport& r) {
  try {
    old = readStoreIndex(r.storeDir);
  } catch (const StaleStoreError& e) {
    r.rebuildReason = e.reason();
  } catch (const DataError& e) {
    r.rebuildReason = std::string("its index was unreadable (") + e.what() + ")";
  }
  if (old && old->tokenizerSpec != spec) {
    r.rebuildReason = "the tokenizer changed";
    old.reset();
  }
  if (!old || !old->complete) return false;
  if (o.phase) o.phase("checking the token store " + r.storeDir);
  bool touched = false;
  std::string why = sourcesChanged(*old, sources, touched, o.verify);
  if (why.empty() && !isSpmVocabSpec(spec) && spec != "byte") {
    why = spmModelChange(spec.substr(4), old->tokenizerHash);
  }
  if (!why.empty()) {
    r.rebuildReason = why;
    old.reset();
    return false;
  }
  // A shard deleted, truncated or (with --verify) changed: tokenized again from there on, the
  // sound shards before it kept (startStore resumes after them).
  if (auto damage = firstDamagedShard(r.storeDir, *old, o.verify)) {
    r.rebuildReason = damage->why + "; tokenizing again from that shard on";
    old->shards.resize(damage->shard);
    old->complete = false;
    return false;
  }
  if (touched || old->preparedAtNs < nowNs() - 2000000000ll) {
    old->preparedAtNs = nowNs();
    try {
      writeStoreIndex(r.storeDir, *old);
    } catch (const DataError&) {  // a read-only store is still usable
    }
  }
  r.reused = true;
  r.tokenizerName = old->tokenizerName;
  r.vocab = old->vocab;
  r.eod = old->eod;
  r.tokens = old->tokens();
  r.shards = old->shards.size();
  r.skipped = old->skipped;
  return true;
}

// Where tokenizing starts: the tokenizer, the index, and the first chunk to tokenize.
struct StoreStart {
  ResolvedTokenizer tok;
  StoreIndex index;
  uint64_t resumeChunk = 0;
};

// An interrupted preparation of the same input resumes after its last shard.
bool resumeStore(const std::string& spec, const std::vector<SourceFile>& sources,
                 size_t chunkBytes, const PrepareOptions& o, const StoreIndex& old,
                 StoreStart& s) {
  if (old.complete || !sameStats(old, sources)) return false;
  try {
    s.tok = spec == "byte" ? byteTokenizer() : spmFromModel(old.tokenizerName.substr(4));
    const uint64_t build = buildIdOf(spec, s.tok.hash, sources, chunkBytes, o.shardTokens);
    if (util::hex64(s.tok.hash) != old.tokenizerHash || util::hex64(build) != old.buildId) return false;
  } catch (const DataError&) {  // its tokenizer is gone: start over
    return false;
  }
  s.index = old;
  s.resumeChunk = old.shards.empty() ? 0 : old.shards.back().endChunk;
  return true;
}

// Step 2: the tokenizer and an index to fill, resumed or new (the store folder emptied).
StoreStart startStore(const std::string& corpusPath, const std::string& spec,
                      const std::vector<SourceFile>& sources, size_t chunkBytes,
                      const PrepareOptions& o, const StoreIndex* old, PrepareReport& r) {
  StoreStart s;
  if (old && resumeStore(spec, sources, chunkBytes, o, *old, s)) {
    r.resumedShards = s.index.shards.size();
  } else {
    if (old && !old->complete) r.rebuildReason = "an interrupted preparation of other input was there";
    if (spec == "byte") s.tok = byteTokenizer();
    else if (isSpmVocabSpec(spec)) s.tok = trainSpmOnSample(corpusPath, spec, o);
    else s.tok = spmFromModel(spec.substr(4));
    StoreIndex& index = s.index;
    index.tokenizerSpec = spec;
    index.tokenizerName = s.tok.name;
    index.tokenizerHash = util::hex64(s.tok.hash);
    index.vocab = s.tok.vocab;
    index.eod = s.tok.eod;
    index.bytesPerToken = bytesPerTokenFor(s.tok.vocab);
    index.buildId = util::hex64(buildIdOf(spec, s.tok.hash, sources, chunkBytes, o.shardTokens));
    std::error_code ec;
    index.corpusPath = fs::absolute(corpusPath, ec).string();
    index.inputBytes = r.inputBytes;
    for (const auto& src : sources) index.sources.push_back({src.relative, src.size, src.mtimeNs, ""});
    fs::create_directories(r.storeDir, ec);
    if (!fs::is_directory(r.storeDir, ec)) throw DataError("cannot create the token store '" + r.storeDir + "'");
    removeStoreFiles(r.storeDir);
  }
  s.index.complete = false;
  writeStoreIndex(r.storeDir, s.index);
  r.tokenizerName = s.tok.name;
  r.vocab = s.index.vocab;
  r.eod = s.index.eod;
  return s;
}

// A corpus that gave no text: the error naming why (every file binary, or nothing to read).
[[noreturn]] void throwNoText(const std::string& corpusPath, const StoreIndex& index,
                              size_t sourceCount) {
  const auto& binary = index.skipped.binaryFiles;
  if (!binary.empty() && binary.size() == sourceCount) {
    std::string names;
    for (size_t i = 0; i < binary.size() && i < 5; ++i) names += (i ? ", " : "") + binary[i];
    throw DataError("corpus folder '" + corpusPath + "' holds no text files: all " +
                    std::to_string(binary.size()) + " are binary (" + names +
                    (binary.size() > 5 ? ", ..." : "") + ")");
  }
  const std::string skippedNote = index.skipped.total() ? " (skipped: " + index.skipped.summary() + ")" : "";
  throw DataError("corpus '" + corpusPath + "' is empty: it holds no text to tokenize" + skippedNote);
}

}  // namespace

PrepareReport prepareCorpus(const std::string& corpusPath, const PrepareOptions& o) {
  const auto t0 = Clock::now();
  std::error_code ec;
  const bool folder = fs::is_directory(corpusPath, ec);
  const std::vector<SourceFile> sources = listCorpusSources(corpusPath);
  for (const auto& s : sources) {
    if (!folder && s.size == 0) throw DataError("corpus '" + corpusPath + "' is empty");
    if (!compressionSupported(s.compression)) openSource(s);  // throws the explanation
  }
  const std::string spec = o.tokenizer.empty() ? "byte" : o.tokenizer;
  if (spec != "byte" && spec.rfind("spm:", 0) != 0) throw DataError("unknown tokenizer '" + spec + "'");
  PrepareReport r;
  r.storeDir = o.storeDir.empty() ? storeDirFor(corpusPath, spec) : o.storeDir;
  const size_t chunkBytes = o.chunkBytes ? o.chunkBytes : spec == "byte" ? (4u << 20) : (8u << 20);
  for (const auto& s : sources) r.inputBytes += s.size;

  // One preparation of a store at a time: another rank or launch on this corpus waits here, then
  // finds the store up to date (two at once would rewrite each other's shards under a mapping).
  fs::create_directories(r.storeDir, ec);
  const util::ExclusiveFileLock lock((fs::path(r.storeDir) / kPrepareLockName).string(), [&] {
    if (o.phase) o.phase("waiting for another process preparing the token store " + r.storeDir);
  }, o.stop);
  if (lock.stopped()) {
    r.interrupted = true;
    r.seconds = since(t0);
    return r;
  }
  std::unique_ptr<StoreIndex> old;
  if (reuseStore(spec, sources, o, old, r)) {
    r.seconds = since(t0);
    return r;
  }
  StoreStart start = startStore(corpusPath, spec, sources, chunkBytes, o, old.get(), r);
  StoreIndex& index = start.index;

  // 3. Tokenize in a stream: chunks in order into shards.
  TokenizePipeline pipe(sources, folder, start.tok, o.threads, chunkBytes, start.resumeChunk, r.storeDir);
  auto say = [&](const std::string& s) {
    if (o.phase) o.phase(s);
  };
  if (!r.rebuildReason.empty()) say("rebuilding the token store " + r.storeDir + ": " + r.rebuildReason);
  say(std::string(r.resumedShards ? "resuming" : "tokenizing") + " " + corpusPath + " with " +
      start.tok.name + " on " + std::to_string(pipe.threads()) + " thread(s)");
  pipe.start();
  PrepareProgress prog;
  prog.rawTotal = r.inputBytes;
  prog.resumedShards = r.resumedShards;
  prog.shards = index.shards.size();
  prog.tokens = index.tokens();
  ShardStream stream(pipe, start.tok, index, r.storeDir, o);
  r.interrupted = !stream.run(start.resumeChunk, prog);
  if (!r.interrupted) {
    index.skipped.binaryFiles = pipe.chunker().binaryFiles();
    if (!stream.anyText()) {
      removeStoreFiles(r.storeDir);
      throwNoText(corpusPath, index, sources.size());
    }
    const auto& hashes = pipe.chunker().hashes();
    for (size_t i = 0; i < index.sources.size(); ++i) index.sources[i].hash = hashes[i];
    index.complete = true;
    index.preparedAtNs = nowNs();
    writeStoreIndex(r.storeDir, index);
  }
  prog.rawDone = r.interrupted ? prog.rawDone : prog.rawTotal;
  if (o.progress) o.progress(prog);
  r.tokens = index.tokens();
  r.shards = index.shards.size();
  r.textBytes = prog.textBytes;
  r.skipped = index.skipped;
  r.seconds = since(t0);
  return r;
}

}  // namespace depthlab::data

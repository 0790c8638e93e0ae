// Preparing corpora into token stores: text, folders and every .jsonl format round-trip;
// skipped records are counted, not fatal; a store is reused until one byte of its corpus
// changes; an interrupted preparation resumes; SentencePiece encodes in a stream on workers.
// Every document (a text file, a .jsonl record) ends with the end-of-document id (byte: 256).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>

#include "data/corpus.h"
#include "data/corpus_chunker.h"
#include "data/corpus_prepare.h"
#include "data/corpus_sources.h"
#include "data/token_dataset.h"
#include "data/token_store.h"
#include "data/tokenizer.h"
#include "support/build_paths.h"
#include "support/temp_dir.h"
#include "util/paths.h"
#include "util/run_command.h"

using namespace depthlab;
using namespace depthlab::data;

namespace {

// The byte tokens of documents, each followed by the end-of-document id.
std::vector<int32_t> docs(const std::vector<std::string>& texts) {
  std::vector<int32_t> t;
  for (const auto& s : texts) {
    for (unsigned char c : s) t.push_back(c);
    t.push_back(kByteEodId);
  }
  return t;
}

std::string lines(int n, const std::string& tag) {
  std::string s;
  for (int i = 0; i < n; ++i) s += tag + " line " + std::to_string(i) + ": the deep layers idle.\n";
  return s;
}

std::string jsonl(const std::vector<std::string>& texts) {
  std::string s;
  for (size_t i = 0; i < texts.size(); ++i) {
    std::string esc;
    for (char c : texts[i]) {
      if (c == '\n')
        esc += "\\n";
      else if (c == '"')
        esc += "\\\"";
      else
        esc += c;
    }
    s += "{\"id\": " + std::to_string(i) + ", \"text\": \"" + esc + "\"}\n";
  }
  return s;
}

PrepareOptions small(const std::string& tokenizer = "byte") {
  PrepareOptions o;
  o.tokenizer = tokenizer;
  o.chunkBytes = 700;    // many chunks
  o.shardTokens = 2000;  // several shards
  o.threads = 3;
  return o;
}

std::vector<int32_t> storeTokens(const PrepareReport& r) {
  return openTokenStore(r.storeDir)->readAll();
}

}  // namespace

TEST(CorpusPrepare, ATextFileRoundTripsThroughShards) {
  test::TempDir dir;
  const std::string text = lines(300, "t");
  test::writeFile(dir.file("c.txt"), text);
  auto r = prepareCorpus(dir.file("c.txt"), small());
  EXPECT_FALSE(r.reused);
  EXPECT_EQ(r.tokens, text.size() + 1);  // the file is one document
  EXPECT_GT(r.shards, 3u);
  EXPECT_EQ(r.vocab, 257);
  EXPECT_EQ(r.eod, 256);
  EXPECT_EQ(storeTokens(r), docs({text}));
  EXPECT_EQ(r.storeDir, dir.file("c.txt.byte.dlstore"));
  auto again = prepareCorpus(dir.file("c.txt"), small());
  EXPECT_TRUE(again.reused);
  EXPECT_EQ(again.eod, 256);
  EXPECT_EQ(storeTokens(again), docs({text}));
}

TEST(CorpusPrepare, AFolderOfTextAndJsonlInEveryCompressionRoundTrips) {
  test::TempDir dir;
  const std::string root = dir.file("corpus");
  std::filesystem::create_directories(root + "/sub");
  const std::string a = lines(40, "a");
  const std::vector<std::string> docsB = {"first doc\nwith two lines", "second \"quoted\" doc"};
  const std::vector<std::string> docsC = {"gzip doc one", "gzip doc two"};
  const std::vector<std::string> docsD = {"zstd doc"};
  test::writeFile(root + "/a.txt", a.substr(0, a.size() - 1));  // no final newline
  test::writeFile(root + "/b.jsonl", jsonl(docsB));
  test::writeFile(root + "/sub/c.jsonl", jsonl(docsC));
  ASSERT_EQ(test::runCommand("gzip -n " + root + "/sub/c.jsonl"), 0);
  const bool zstd = util::programExists("zstd");
  if (zstd) {
    test::writeFile(root + "/sub/d.jsonl", jsonl(docsD));
    ASSERT_EQ(test::runCommand("zstd -q --rm " + root + "/sub/d.jsonl"), 0);
  }
  auto r = prepareCorpus(root, small());
  std::vector<std::string> expected = {a.substr(0, a.size() - 1)};  // a file is a document
  for (const auto& d : docsB) expected.push_back(d);                // so is a record
  for (const auto& d : docsC) expected.push_back(d);
  if (zstd) {
    for (const auto& d : docsD) expected.push_back(d);
  }
  EXPECT_EQ(storeTokens(r), docs(expected));
  EXPECT_EQ(r.skipped.total(), 0u);
  // The store of a folder sits beside it, never inside (it would become part of the corpus).
  EXPECT_EQ(std::filesystem::path(r.storeDir).parent_path(), std::filesystem::path(dir.path()));
  EXPECT_TRUE(prepareCorpus(root, small()).reused);
}

TEST(CorpusPrepare, JsonlRecordsWithoutTextOrWithBadUtf8AreCountedNotFatal) {
  test::TempDir dir;
  std::string s = jsonl({"good one"});
  s += "{\"id\": 1, \"content\": \"no text field\"}\n";
  s += "{\"text\": \"bad \xC3\x28 utf8\"}\n";
  s += "this is not json\n";
  s += "\n";
  s += jsonl({"good two"});
  test::writeFile(dir.file("c.jsonl"), s);
  auto r = prepareCorpus(dir.file("c.jsonl"), small());
  EXPECT_EQ(storeTokens(r), docs({"good one", "good two"}));
  EXPECT_EQ(r.skipped.linesWithoutText, 1u);
  EXPECT_EQ(r.skipped.invalidUtf8Lines, 1u);
  EXPECT_EQ(r.skipped.invalidJsonLines, 1u);
  EXPECT_NE(r.skipped.summary().find("1 jsonl line(s) without a string \"text\""),
            std::string::npos);
  // Recorded in the store, so a reused store still reports them.
  EXPECT_EQ(prepareCorpus(dir.file("c.jsonl"), small()).skipped.total(), 3u);
  // A damaged .gz is an error naming the file.
  test::writeFile(dir.file("broken.jsonl.gz"), "\x1f\x8b\x08\x00garbage that is not deflate");
  try {
    prepareCorpus(dir.file("broken.jsonl.gz"), small());
    ADD_FAILURE() << "a damaged gzip file was accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("broken.jsonl.gz"), std::string::npos) << e.what();
  }
}

TEST(CorpusPrepare, OneChangedByteRetokenizesAndATouchAloneDoesNot) {
  test::TempDir dir;
  std::string text = lines(200, "x");
  test::writeFile(dir.file("c.txt"), text);
  auto first = prepareCorpus(dir.file("c.txt"), small());
  // Touched, content equal: reused after hashing.
  struct timespec times[2] = {{0, UTIME_NOW}, {1000000000, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, dir.file("c.txt").c_str(), times, 0), 0);
  auto touched = prepareCorpus(dir.file("c.txt"), small());
  EXPECT_TRUE(touched.reused) << touched.rebuildReason;
  // One byte in the middle, same size, written right away (same clock tick as the index).
  text[text.size() / 2] = text[text.size() / 2] == 'Q' ? 'R' : 'Q';
  test::writeFile(dir.file("c.txt"), text);
  auto edited = prepareCorpus(dir.file("c.txt"), small());
  EXPECT_FALSE(edited.reused);
  EXPECT_NE(edited.rebuildReason.find("changed"), std::string::npos) << edited.rebuildReason;
  EXPECT_EQ(storeTokens(edited), docs({text}));
  // A longer file is noticed by its size.
  test::writeFile(dir.file("c.txt"), text + "more\n");
  auto longer = prepareCorpus(dir.file("c.txt"), small());
  EXPECT_NE(longer.rebuildReason.find("size"), std::string::npos) << longer.rebuildReason;
  // Another tokenizer spec is another store.
  EXPECT_NE(storeDirFor(dir.file("c.txt"), "spm:64"), longer.storeDir);
}

TEST(CorpusPrepare, AnInterruptedPreparationResumesAfterItsLastShard) {
  test::TempDir dir;
  const std::string text = lines(500, "r");
  test::writeFile(dir.file("c.txt"), text);
  auto o = small();
  o.stopAfterShards = 2;
  auto cut = prepareCorpus(dir.file("c.txt"), o);
  EXPECT_TRUE(cut.interrupted);
  EXPECT_EQ(cut.shards, 2u);
  EXPECT_THROW(openTokenStore(cut.storeDir), DataError);  // incomplete: not used for training
  auto resumed = prepareCorpus(dir.file("c.txt"), small());
  EXPECT_FALSE(resumed.interrupted);
  EXPECT_EQ(resumed.resumedShards, 2u);
  EXPECT_GT(resumed.shards, 2u);
  EXPECT_EQ(storeTokens(resumed), docs({text}));
  // A different shard size is a different build: starts over rather than mixing.
  auto o2 = small();
  o2.shardTokens = 3000;
  o2.stopAfterShards = 1;
  prepareCorpus(dir.file("c.txt"), o2);
  auto restarted = prepareCorpus(dir.file("c.txt"), small());
  EXPECT_EQ(restarted.resumedShards, 0u);
  EXPECT_EQ(storeTokens(restarted), docs({text}));
  // A training launch stopped (Ctrl-C, the window) while tokenizing says what it kept.
  test::writeFile(dir.file("d.txt"), text);
  std::atomic<bool> stop{true};
  DataConfig dc;
  dc.corpus = dir.file("d.txt");
  try {
    loadCorpusTokens(dc, {}, &stop);
    ADD_FAILURE() << "a stopped preparation was used";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("the next launch resumes"), std::string::npos) << e.what();
  }
}

TEST(CorpusPrepare, EmptyBinaryAndMissingCorporaAreRefusedClearly) {
  test::TempDir dir;
  auto why = [&](const std::string& path) {
    try {
      prepareCorpus(path, small());
    } catch (const DataError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  test::writeFile(dir.file("empty.txt"), "");
  EXPECT_NE(why(dir.file("empty.txt")).find("is empty"), std::string::npos);
  test::writeFile(dir.file("blank.txt"), " \n\n \t\n");
  EXPECT_NE(why(dir.file("blank.txt")).find("is empty"), std::string::npos);
  test::writeFile(dir.file("none.jsonl"), "{\"a\": 1}\n{\"b\": 2}\n");
  EXPECT_NE(why(dir.file("none.jsonl")).find("2 jsonl line(s) without"), std::string::npos)
      << why(dir.file("none.jsonl"));
  test::writeFile(dir.file("bin.dat"), std::string("\x01\x00\x02\x00", 4) + std::string(500, '\0'));
  EXPECT_NE(why(dir.file("bin.dat")).find("does not look like UTF-8 text"), std::string::npos);
  EXPECT_NE(why(dir.file("absent.txt")).find("does not exist"), std::string::npos);
  // In a folder, a binary file is skipped and named; the text is kept.
  std::filesystem::create_directories(dir.file("mixed"));
  test::writeFile(dir.file("mixed/a.txt"), "some text\n");
  test::writeFile(dir.file("mixed/blob.dat"), std::string(100, '\0'));
  auto r = prepareCorpus(dir.file("mixed"), small());
  EXPECT_EQ(storeTokens(r), docs({"some text\n"}));
  ASSERT_EQ(r.skipped.binaryFiles.size(), 1u);
  EXPECT_EQ(r.skipped.binaryFiles[0], "blob.dat");
}

TEST(CorpusPrepare, SentencePieceEncodesInAStreamOnWorkers) {
  if (!SpmTokenizer::toolsAvailable()) GTEST_SKIP() << "sentencepiece tools not installed";
  test::TempDir dir;
  const std::string text = lines(400, "spm");
  test::writeFile(dir.file("c.txt"), text);
  auto o = small("spm:80");
  o.chunkBytes = 4000;
  o.shardTokens = 3000;
  auto r = prepareCorpus(dir.file("c.txt"), o);
  EXPECT_EQ(r.vocab, 80);
  EXPECT_GT(r.shards, 1u);
  EXPECT_EQ(r.eod, 1);  // the model's own end-of-sentence id ends the document
  SpmTokenizer tok(r.tokenizerName.substr(4));
  auto whole = tok.encodeFile(dir.file("c.txt"));
  whole.push_back(1);
  EXPECT_EQ(storeTokens(r), whole);  // chunking changes nothing
  EXPECT_TRUE(prepareCorpus(dir.file("c.txt"), o).reused);
  // A given model file is used as it is, and keyed on its content.
  auto given = small("spm:" + r.tokenizerName.substr(4));
  auto r2 = prepareCorpus(dir.file("c.txt"), given);
  EXPECT_EQ(storeTokens(r2), storeTokens(r));
}

TEST(CorpusPrepare, TrainingReadsTheStoreAndTheCliPreparesAhead) {
  test::TempDir dir;
  std::vector<std::string> docs;
  for (int i = 0; i < 300; ++i)
    docs.push_back("document " + std::to_string(i) + " about depth and variance.");
  test::writeFile(dir.file("c.jsonl"), jsonl(docs));
  std::string out;
  const std::string cli = depthlab::test::cliPath();
  ASSERT_EQ(test::runCommand(cli + " corpus prepare " + dir.file("c.jsonl") + " --quiet", &out), 0)
      << out;
  EXPECT_NE(out.find("tokens:"), std::string::npos) << out;
  EXPECT_NE(out.find("1 shard"), std::string::npos) << out;
  EXPECT_NE(out.find("time:"), std::string::npos) << out;
  DataConfig dc;
  dc.corpus = dir.file("c.jsonl");
  std::vector<std::string> phases;
  auto ct = loadCorpusTokens(dc, [&](const std::string& p) { phases.push_back(p); });
  EXPECT_EQ(ct.storeDir, dir.file("c.jsonl.byte.dlstore"));
  EXPECT_EQ(ct.vocabSize, 257);
  EXPECT_EQ(ct.eod, 256);
  ASSERT_FALSE(phases.empty());
  EXPECT_NE(phases.back().find("up to date"), std::string::npos) << phases.back();
  // The store can be named as the corpus directly.
  dc.corpus = ct.storeDir;
  EXPECT_EQ(loadCorpusTokens(dc).tokens->size(), ct.tokens->size());
  ASSERT_EQ(test::runCommand(cli + " --json corpus info " + ct.storeDir, &out), 0) << out;
  EXPECT_NE(out.find("\"verified\":true"), std::string::npos) << out;
  // Without --json: one fact a line for a reader (it had printed the JSON indented).
  ASSERT_EQ(test::runCommand(cli + " corpus info " + ct.storeDir, &out), 0) << out;
  EXPECT_EQ(out.find('{'), std::string::npos) << out;
  EXPECT_NE(out.find("token store  " + ct.storeDir + " (every shard verified)"), std::string::npos)
      << out;
  EXPECT_NE(out.find("tokenizer    byte (vocabulary 257)"), std::string::npos) << out;
  EXPECT_NE(out.find("tokens       "), std::string::npos) << out;
  EXPECT_NE(out.find("complete     yes"), std::string::npos) << out;
}

// In the shared data cache (where stores of corpora in read-only folders go) two corpora with
// one file name get stores of their own.
TEST(CorpusPrepare, StoresInTheSharedCacheAreNamedAfterTheCorpusPathToo) {
  test::TempDir dir;
  const char* old = std::getenv("XDG_DATA_HOME");
  const std::string saved = old ? old : "";
  setenv("XDG_DATA_HOME", dir.path().c_str(), 1);
  const std::string cache = dir.file("depthlab/cache");
  std::filesystem::create_directories(cache);
  test::writeFile(cache + "/train.txt", "x\n");
  const std::string shared = storeDirFor(cache + "/train.txt", "byte");
  std::filesystem::create_directories(dir.file("a"));
  const std::string beside = storeDirFor(dir.file("a/train.txt"), "byte");
  if (old)
    setenv("XDG_DATA_HOME", saved.c_str(), 1);
  else
    unsetenv("XDG_DATA_HOME");
  EXPECT_EQ(beside, dir.file("a/train.txt.byte.dlstore"));
  EXPECT_NE(shared, cache + "/train.txt.byte.dlstore");
  EXPECT_EQ(shared.rfind(cache + "/train.txt.byte-", 0), 0u) << shared;
}

// A corpus in a folder marked read-only (r-x for everyone, as shared data is) gets its store in
// the data folder's cache, also for root, whom the system lets write there anyway (stores and
// tokenizer models had been written into the shared data folder).
TEST(CorpusPrepare, AFolderMarkedReadOnlyKeepsItsFilesAlsoForRoot) {
  test::TempDir dir;
  const char* old = std::getenv("XDG_DATA_HOME");
  const std::string saved = old ? old : "";
  setenv("XDG_DATA_HOME", dir.file("data").c_str(), 1);
  std::filesystem::create_directories(dir.file("shared"));
  test::writeFile(dir.file("shared/train.txt"), "x\n");
  ASSERT_EQ(::chmod(dir.file("shared").c_str(), 0555), 0);
  const std::string readOnly = storeDirFor(dir.file("shared/train.txt"), "byte");
  ASSERT_EQ(::chmod(dir.file("shared").c_str(), 0755), 0);
  const std::string writable = storeDirFor(dir.file("shared/train.txt"), "byte");
  if (old)
    setenv("XDG_DATA_HOME", saved.c_str(), 1);
  else
    unsetenv("XDG_DATA_HOME");
  EXPECT_EQ(readOnly.rfind(dir.file("data/depthlab/cache") + "/", 0), 0u) << readOnly;
  EXPECT_EQ(writable, dir.file("shared/train.txt.byte.dlstore"));
  EXPECT_FALSE(util::folderMeantWritable(dir.file("missing")));
}

TEST(CorpusPrepare, AJsonlRecordLongerThanAChunkIsReadWholeNotCutInTwo) {
  test::TempDir dir;
  const std::string longText(5000, 'x');  // over seven 700-byte chunks, one line
  test::writeFile(dir.file("c.jsonl"), jsonl({"short one", longText, "short two"}));
  auto r = prepareCorpus(dir.file("c.jsonl"), small());
  EXPECT_EQ(r.skipped.total(), 0u) << r.skipped.summary();
  EXPECT_EQ(storeTokens(r), docs({"short one", longText, "short two"}));
}

TEST(CorpusPrepare, AJsonlRecordPastTheMemoryLimitIsAnErrorNamingIt) {
  test::TempDir dir;
  test::writeFile(dir.file("c.jsonl"), jsonl({"one", "two", std::string(20000, 'y')}));
  CorpusChunker chunker(listCorpusSources(dir.file("c.jsonl")), 700, false, 4096);
  RawChunk chunk;
  try {
    while (chunker.next(chunk)) {}
    ADD_FAILURE() << "a record past the limit was accepted";
  } catch (const DataError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("c.jsonl"), std::string::npos) << what;
    EXPECT_NE(what.find("line 3"), std::string::npos) << what;
  }
}

// An edit that keeps a file's size and time (cp -p, rsync -t, touch -d) is not seen by the
// size-and-time check; `verify` hashes every source and rebuilds the store.
TEST(CorpusPrepare, VerifyFindsAnEditThatKeptTheSizeAndTime) {
  test::TempDir dir;
  const std::string path = dir.file("c.txt");
  std::string text = lines(50, "v");
  test::writeFile(path, text);
  const timespec old[2] = {{1600000000, 0}, {1600000000, 0}};  // long before any preparation
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), old, 0), 0);
  auto first = prepareCorpus(path, small());
  text[10] = text[10] == 'x' ? 'y' : 'x';  // same size
  test::writeFile(path, text);
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), old, 0), 0);  // same time
  EXPECT_TRUE(prepareCorpus(path, small()).reused);         // what the cheap check promises
  auto o = small();
  o.verify = true;
  auto verified = prepareCorpus(path, o);
  EXPECT_FALSE(verified.reused);
  EXPECT_NE(verified.rebuildReason.find("changed content"), std::string::npos)
      << verified.rebuildReason;
  EXPECT_EQ(storeTokens(verified), docs({text}));
  EXPECT_TRUE(prepareCorpus(path, o).reused);  // verified again: unchanged now
}

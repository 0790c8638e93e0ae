// Documents kept apart: a token store puts the tokenizer's end-of-document id after every
// document (a .jsonl record, a text file; byte: 256 of a 257-id vocabulary, SentencePiece: its
// own </s>), stores made before are rebuilt saying why, and `document` packing makes one row of
// each document, cut to the window and padded (pad inputs: the end-of-document id; pad
// targets: kIgnoreTarget), as a pure function of (seed, step, micro-batch).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "data/corpus.h"
#include "data/corpus_prepare.h"
#include "data/token_dataset.h"
#include "data/token_store.h"
#include "data/tokenizer.h"
#include "support/temp_dir.h"
#include "util/run_command.h"

using namespace depthlab;
using namespace depthlab::data;

namespace {

std::string jsonl(const std::vector<std::string>& texts) {
  std::string s;
  for (const auto& t : texts) {
    std::string esc;
    for (char c : t) esc += c == '\n' ? std::string("\\n") : std::string(1, c);
    s += "{\"text\": \"" + esc + "\"}\n";
  }
  return s;
}

PrepareOptions small(const std::string& tokenizer = "byte") {
  PrepareOptions o;
  o.tokenizer = tokenizer;
  o.chunkBytes = 64;  // the smallest chunk: many of them
  o.shardTokens = 50;
  o.threads = 2;
  return o;
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

// The convention: each document's tokens, then one end-of-document id; nothing else between.
TEST(Documents, ThreeJsonlRecordsOfThreeBytesMakeTwelveTokens) {
  test::TempDir dir;
  test::writeFile(dir.file("c.jsonl"), jsonl({"abc", "def", "ghi"}));
  const auto r = prepareCorpus(dir.file("c.jsonl"), small());
  EXPECT_EQ(r.tokens, 3u * 3 + 3);
  EXPECT_EQ(r.vocab, kByteVocab);
  EXPECT_EQ(r.eod, kByteEodId);
  const std::vector<int32_t> expected = {'a', 'b', 'c', 256, 'd', 'e', 'f', 256, 'g', 'h', 'i', 256};
  EXPECT_EQ(openTokenStore(r.storeDir)->readAll(), expected);
  const auto index = readStoreIndex(r.storeDir);
  EXPECT_EQ(index->eod, 256);
  EXPECT_EQ(index->toJson()["dtype"], "uint16");  // 257 ids do not fit a byte
  EXPECT_EQ(index->toJson()["version"], 2);
}

TEST(Documents, EveryFileOfAFolderEndsWithOneAlsoWhenItsLengthFallsOnACut) {
  test::TempDir dir;
  std::filesystem::create_directories(dir.file("corpus"));
  const std::string line(63, 'x');
  test::writeFile(dir.file("corpus/a.txt"), line + "\n");  // 64 bytes: one whole chunk
  test::writeFile(dir.file("corpus/b.txt"), "tail without newline");
  test::writeFile(dir.file("corpus/c.txt"), "");  // empty: no document
  const auto r = prepareCorpus(dir.file("corpus"), small());
  std::vector<int32_t> expected;
  for (const std::string& doc : {line + "\n", std::string("tail without newline")}) {
    for (unsigned char ch : doc) expected.push_back(ch);
    expected.push_back(kByteEodId);
  }
  EXPECT_EQ(openTokenStore(r.storeDir)->readAll(), expected);
}

TEST(Documents, SentencePieceStoresCarryTheEndOfSentenceIdBetweenRecords) {
  if (!SpmTokenizer::toolsAvailable()) GTEST_SKIP() << "sentencepiece tools not installed";
  test::TempDir dir;
  std::vector<std::string> texts;
  for (int i = 0; i < 120; ++i) {
    texts.push_back("record " + std::to_string(i) + " on the variance of deep layers" +
                    (i % 3 == 0 ? "\nand a second line of it" : ""));
  }
  test::writeFile(dir.file("c.jsonl"), jsonl(texts));
  auto o = small("spm:90");
  o.chunkBytes = 2000;
  o.shardTokens = 1000;
  const auto r = prepareCorpus(dir.file("c.jsonl"), o);
  SpmTokenizer tok(r.tokenizerName.substr(4));
  EXPECT_FALSE(tok.encodesWholeDocuments());  // its lines give the same ids, faster
  EXPECT_EQ(tok.eosId(), 1);
  EXPECT_EQ(r.eod, 1);
  EXPECT_EQ(r.vocab, 90);  // </s> is one of its pieces
  std::vector<int32_t> expected;
  for (const auto& t : texts) {
    const auto ids = tok.encode(t);
    expected.insert(expected.end(), ids.begin(), ids.end());
    expected.push_back(1);
  }
  const auto stored = openTokenStore(r.storeDir)->readAll();
  EXPECT_EQ(stored, expected);
  EXPECT_EQ(std::count(stored.begin(), stored.end(), 1), 120);
}

// A model that keeps newlines (identity normalisation, byte fallback: a Llama-style
// tokenizer.model): the store encodes each record whole, so a newline inside a record is its
// byte piece, not dropped between two lines as spm_encode's lines drop it.
TEST(Documents, SentencePieceStoresEncodeEachDocumentWholeNewlinesKept) {
  if (!SpmTokenizer::toolsAvailable()) GTEST_SKIP() << "sentencepiece tools not installed";
  test::TempDir dir;
  std::string sample;
  for (int i = 0; i < 200; ++i) sample += "line " + std::to_string(i) + " of the sample text\n";
  test::writeFile(dir.file("sample.txt"), sample);
  const std::string prefix = dir.file("keeps");
  util::CommandOptions quiet;
  quiet.stderrMode = util::Stderr::Capture;
  ASSERT_EQ(util::runProgram({"spm_train", "--input=" + dir.file("sample.txt"),
                              "--model_prefix=" + prefix, "--vocab_size=300",
                              "--normalization_rule_name=identity", "--byte_fallback=true",
                              "--remove_extra_whitespaces=false", "--minloglevel=2"},
                             quiet)
                .status,
            0);
  SpmTokenizer tok(prefix + ".model");
  if (!tok.encodesWholeDocuments()) GTEST_SKIP() << "depthlab-spm-encode not built";
  const std::vector<std::string> texts = {"line 1\nline 2", "of the\n\nsample", "text"};
  test::writeFile(dir.file("c.jsonl"), jsonl(texts));
  auto o = small("spm:" + prefix + ".model");
  const auto r = prepareCorpus(dir.file("c.jsonl"), o);
  std::vector<int32_t> expected;
  for (const auto& ids : tok.encodeDocuments({texts.begin(), texts.end()}, dir.file("scratch"))) {
    expected.insert(expected.end(), ids.begin(), ids.end());
    expected.push_back(r.eod);
  }
  const auto newline = tok.encodeDocuments({"\n"}, dir.file("scratch")).front();
  ASSERT_FALSE(newline.empty());
  const auto stored = openTokenStore(r.storeDir)->readAll();
  EXPECT_EQ(stored, expected);
  EXPECT_EQ(std::count(stored.begin(), stored.end(), newline.back()), 3);

  // A store made through spm_encode's lines (the helper missing) is rebuilt, saying why.
  setenv("DEPTHLAB_SPM_ENCODE", dir.file("missing").c_str(), 1);
  const auto lines = prepareCorpus(dir.file("c.jsonl"), o);
  unsetenv("DEPTHLAB_SPM_ENCODE");
  EXPECT_FALSE(lines.reused);
  const auto dropped = openTokenStore(lines.storeDir)->readAll();
  EXPECT_EQ(std::count(dropped.begin(), dropped.end(), newline.back()), 0);
  const auto again = prepareCorpus(dir.file("c.jsonl"), o);
  EXPECT_FALSE(again.reused);
  EXPECT_NE(again.rebuildReason.find("line by line"), std::string::npos) << again.rebuildReason;
  EXPECT_EQ(openTokenStore(again.storeDir)->readAll(), expected);
}

TEST(Documents, AStoreMadeBeforeIsRebuiltSayingWhy) {
  test::TempDir dir;
  test::writeFile(dir.file("c.jsonl"), jsonl({"abc", "def", "ghi"}));
  const auto first = prepareCorpus(dir.file("c.jsonl"), small());
  // The index as DepthLab wrote it before documents were kept apart.
  const std::string indexPath = first.storeDir + "/index.json";
  auto j = nlohmann::json::parse(test::readFile(indexPath));
  j["version"] = 1;
  j.erase("eod");
  test::writeFile(indexPath, j.dump());
  const std::string direct = errorOf([&] {
    DataConfig dc;
    dc.corpus = first.storeDir;
    loadCorpusTokens(dc);
  });
  EXPECT_NE(direct.find("out of date"), std::string::npos) << direct;
  EXPECT_NE(direct.find("end-of-document"), std::string::npos) << direct;
  EXPECT_NE(direct.find("rebuild"), std::string::npos) << direct;
  std::vector<std::string> phases;
  auto o = small();
  o.phase = [&](const std::string& p) { phases.push_back(p); };
  const auto again = prepareCorpus(dir.file("c.jsonl"), o);
  EXPECT_FALSE(again.reused);
  EXPECT_NE(again.rebuildReason.find("earlier DepthLab"), std::string::npos) << again.rebuildReason;
  bool said = false;
  for (const auto& p : phases) said = said || p.find("rebuilding the token store") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_EQ(again.tokens, 12u);
  EXPECT_TRUE(prepareCorpus(dir.file("c.jsonl"), small()).reused);
}

namespace {

// Documents k = 0..n-1 of content k+1 repeated (k % 9) times (k % 9 == 0: an empty document),
// each followed by the end-of-document id 0.
std::vector<int32_t> numberedDocuments(int n, std::vector<uint64_t>* starts = nullptr) {
  std::vector<int32_t> t;
  for (int k = 0; k < n; ++k) {
    if (starts) starts->push_back(t.size());
    for (int i = 0; i < k % 9; ++i) t.push_back(k + 1);
    t.push_back(0);
  }
  return t;
}

}  // namespace

TEST(DocumentPacking, RowsAreDocumentsCutToTheWindowAndPadded) {
  const int T = 4, B = 6;
  std::vector<uint64_t> starts;
  const auto tokens = numberedDocuments(300, &starts);
  TokenDataset d(tokens, 1000, 0.2, T, B, Packing::Document, 0);
  ASSERT_NE(d.documents(), nullptr);
  EXPECT_EQ(d.documents()->documents(), 300u);
  const uint64_t split = d.trainTokens();
  std::set<int64_t> trainSeen;
  for (int64_t step = 0; step < 40; ++step) {
    const auto b = d.trainBatch(7, step, 1);
    uint64_t counted = 0;
    for (int r = 0; r < B; ++r) {
      const int64_t* x = &b.inputs[static_cast<size_t>(r * T)];
      const int64_t* y = &b.targets[static_cast<size_t>(r * T)];
      const int64_t k = x[0] - 1;  // the document
      ASSERT_GE(k, 0);
      ASSERT_NE(k % 9, 0) << "an empty document became a row";
      EXPECT_LT(starts[static_cast<size_t>(k)] + static_cast<uint64_t>(k % 9), split);  // ends in train
      trainSeen.insert(k);
      const int len = static_cast<int>(k % 9);  // content tokens; the row holds len + 1 with the EOD
      for (int t = 0; t < T; ++t) {
        EXPECT_EQ(x[t], t < len ? k + 1 : 0) << "row " << r << " position " << t;  // pads: EOD id
        const int64_t want = t + 1 < len ? k + 1 : t + 1 == len ? 0 : kIgnoreTarget;
        EXPECT_EQ(y[t], want) << "row " << r << " position " << t;
        counted += y[t] != kIgnoreTarget;
      }
    }
    EXPECT_EQ(d.trainTargets(7, step, 1), counted);
    // A pure function of (seed, step, micro-batch); a rank's rows are the same rows.
    const auto again = d.trainBatch(7, step, 1);
    EXPECT_EQ(again.inputs, b.inputs);
    EXPECT_EQ(again.targets, b.targets);
    const auto rows = d.trainBatchRows(7, step, 1, 2, 5);
    EXPECT_EQ(rows.inputs, std::vector<int64_t>(b.inputs.begin() + 2 * T, b.inputs.begin() + 5 * T));
    EXPECT_EQ(rows.targets, std::vector<int64_t>(b.targets.begin() + 2 * T, b.targets.begin() + 5 * T));
  }
  EXPECT_GT(trainSeen.size(), 50u);
  EXPECT_NE(d.trainBatch(7, 0, 1).inputs, d.trainBatch(8, 0, 1).inputs);
  // Validation and probe rows: documents that start after the split.
  for (int i = 0; i < 3; ++i) {
    const auto v = d.valBatch(i, 3);
    EXPECT_EQ(v.inputs, d.valBatch(i, 3).inputs);
    for (int r = 0; r < B; ++r) EXPECT_GE(starts[static_cast<size_t>(v.inputs[r * T] - 1)], split);
  }
  const auto p = d.probeBatch(5);
  for (int r = 0; r < 5; ++r) EXPECT_GE(starts[static_cast<size_t>(p.inputs[r * T] - 1)], split);
}

TEST(DocumentPacking, PackedBatchesAreUnchangedAndCountEveryTarget) {
  const auto tokens = numberedDocuments(300);
  TokenDataset packed(tokens, 1000, 0.2, 4, 6);
  TokenDataset explicitly(tokens, 1000, 0.2, 4, 6, Packing::Packed, 0);
  EXPECT_EQ(packed.trainBatch(3, 5, 0).inputs, explicitly.trainBatch(3, 5, 0).inputs);
  EXPECT_EQ(packed.trainTargets(3, 5, 0), 24u);
  EXPECT_EQ(packed.documents(), nullptr);
  for (auto t : packed.trainBatch(3, 5, 0).targets) EXPECT_NE(t, kIgnoreTarget);
}

TEST(DocumentPacking, BadInputIsRefusedByName) {
  const std::string foo = errorOf([] { packingFrom("foo"); });
  EXPECT_NE(foo.find("'foo'"), std::string::npos) << foo;
  EXPECT_NE(foo.find("packed, document"), std::string::npos) << foo;
  // One document (a single text file) cannot fill a batch of documents.
  std::vector<int32_t> one(5000, 7);
  one.push_back(0);
  const std::string few = errorOf([&] { TokenDataset(one, 10, 0.1, 8, 4, Packing::Document, 0); });
  EXPECT_NE(few.find("too few documents"), std::string::npos) << few;
  const std::string none = errorOf([] { TokenDataset(std::vector<int32_t>(5000, 7), 10, 0.1, 8, 4, Packing::Document, 0); });
  EXPECT_NE(none.find("no end-of-document"), std::string::npos) << none;
  // .bin tokens carry no end-of-document id.
  CorpusTokens bin;
  bin.tokens = std::make_shared<InMemoryTokens>(numberedDocuments(300));
  bin.vocabSize = 1000;
  bin.corpusPath = "train.bin";
  DataConfig dc;
  dc.packing = "document";
  const std::string pre = errorOf([&] { makeDataset(bin, dc, 4, 6); });
  EXPECT_NE(pre.find("pre-tokenized"), std::string::npos) << pre;
  bin.eod = 0;
  EXPECT_EQ(makeDataset(bin, dc, 4, 6).packing(), Packing::Document);
}

TEST(DocumentPacking, AStoreOfRecordsBatchesItsDocuments) {
  test::TempDir dir;
  std::vector<std::string> texts;
  for (int i = 0; i < 60; ++i) texts.push_back("doc " + std::to_string(i) + std::string(i % 13, '.'));
  test::writeFile(dir.file("c.jsonl"), jsonl(texts));
  prepareCorpus(dir.file("c.jsonl"), small());  // many shards: documents across them
  DataConfig dc;
  dc.corpus = dir.file("c.jsonl");
  dc.packing = "document";
  auto ds = makeDataset(loadCorpusTokens(dc), dc, 12, 4);
  EXPECT_EQ(ds.documents()->documents(), 60u);
  const auto b = ds.trainBatch(1, 0, 0);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(b.inputs[static_cast<size_t>(r * 12)], 'd');  // every row starts a document
    EXPECT_EQ(b.inputs[static_cast<size_t>(r * 12) + 1], 'o');
  }
}

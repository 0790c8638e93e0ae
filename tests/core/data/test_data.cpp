// Corpora, tokenizers and the token dataset: split without overlap, deterministic batches
// whose contents can be checked exactly, token files, the default corpus' cleaning, and
// SentencePiece run out of process (including a CLI training run with an spm tokenizer).
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "data/corpus.h"
#include "data/corpus_prepare.h"
#include "data/default_corpus.h"
#include "data/token_dataset.h"
#include "data/token_store.h"
#include "data/tokenizer.h"
#include "support/build_paths.h"
#include "support/temp_dir.h"

using namespace depthlab;
using namespace depthlab::data;

TEST(TokenDataset, SplitHasNoOverlapAndBatchesAreExact) {
  std::vector<int32_t> tokens(10000);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>(i % 251);
  TokenDataset d(tokens, 256, 0.1, 16, 4);
  EXPECT_EQ(d.trainTokens(), 9000u);
  EXPECT_EQ(d.valTokens(), 1000u);
  for (int64_t step = 0; step < 50; ++step) {
    auto b = d.trainBatch(3, step, 0);
    ASSERT_EQ(b.inputs.size(), 64u);
    for (int r = 0; r < 4; ++r) {
      // Consecutive ids: each row is a window, targets are inputs shifted by one.
      for (int t = 0; t < 16; ++t) {
        EXPECT_EQ(b.targets[r * 16 + t], (b.inputs[r * 16 + t] + 1) % 251);
      }
    }
  }
  for (int i = 0; i < 2; ++i) {
    auto v = d.valBatch(i, 2);
    auto v2 = d.valBatch(i, 2);
    EXPECT_EQ(v.inputs, v2.inputs);  // fixed
  }
}

TEST(TokenDataset, TrainWindowsStayInTheTrainSplit) {
  // Tokens equal to their position (mod vocab large enough), so a window's start is visible.
  std::vector<int32_t> tokens(5000);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>(i);
  TokenDataset d(tokens, 5000, 0.2, 8, 8);
  for (int64_t step = 0; step < 500; ++step) {
    auto b = d.trainBatch(1, step, 0);
    for (auto t : b.targets) EXPECT_LT(t, 4000);
  }
  for (int i = 0; i < 3; ++i) {
    for (auto t : d.valBatch(i, 3).inputs) EXPECT_GE(t, 4000);
  }
}

TEST(TokenDataset, TooShortCorpusIsRejected) {
  EXPECT_THROW(TokenDataset(std::vector<int32_t>(100, 1), 256, 0.1, 64, 16), DataError);
  EXPECT_THROW(TokenDataset(std::vector<int32_t>(10000, 300), 256, 0.1, 8, 2), DataError);
}

TEST(Corpus, ReadsFilesAndFolders) {
  test::TempDir dir;
  std::filesystem::create_directories(dir.file("books/b"));
  test::writeFile(dir.file("books/a.txt"), "alpha\n");
  test::writeFile(dir.file("books/b/c.txt"), "gamma");
  test::writeFile(dir.file("books/b/junk.bin"), std::string("\0\1\2\3", 4));
  // Read through the token store (byte-level: a byte is its own id, '|' stands for the
  // end-of-document id after each file); the binary file is skipped.
  auto text = [](const std::string& path) {
    std::string s;
    for (auto t : openTokenStore(prepareCorpus(path, PrepareOptions{}).storeDir)->readAll()) {
      s += t == kByteEodId ? '|' : static_cast<char>(t);
    }
    return s;
  };
  EXPECT_EQ(text(dir.file("books")), "alpha\n|gamma|");
  EXPECT_EQ(text(dir.file("books/a.txt")), "alpha\n|");
  EXPECT_NE(binaryReason(std::string("a\0b", 3)), "");
  EXPECT_EQ(binaryReason("héllo wörld — ok"), "");
}

TEST(Corpus, TokenFiles) {
  test::TempDir dir;
  std::vector<uint16_t> raw = {1, 2, 3, 65535};
  test::writeFile(dir.file("nano.bin"), std::string(reinterpret_cast<char*>(raw.data()), 8));
  EXPECT_EQ(readTokenFile(dir.file("nano.bin")), (std::vector<int32_t>{1, 2, 3, 65535}));
  std::string llmc(1024, '\0');
  int32_t header[3] = {20240520, 1, 3};
  std::memcpy(llmc.data(), header, sizeof(header));
  llmc += std::string(reinterpret_cast<char*>(raw.data()), 6);
  test::writeFile(dir.file("llmc.bin"), llmc);
  EXPECT_EQ(readTokenFile(dir.file("llmc.bin")), (std::vector<int32_t>{1, 2, 3}));
  header[2] = 1000;  // claims more tokens than present
  std::memcpy(llmc.data(), header, sizeof(header));
  test::writeFile(dir.file("bad.bin"), llmc);
  EXPECT_THROW(readTokenFile(dir.file("bad.bin")), DataError);
  EXPECT_TRUE(isTokenFile("x/train.bin"));
  EXPECT_FALSE(isTokenFile("x/train.txt"));
}

TEST(DefaultCorpus, CleansBibleOutput) {
  std::string raw =
      "\nGenesis 1\n\n  1 In the beginning God created the heaven and the earth.\n"
      "  2 And the earth was without form, and void.\n\nExodus 3\n\n 14 I AM THAT I AM.\n";
  EXPECT_EQ(cleanBibleOutput(raw),
            "In the beginning God created the heaven and the earth.\n"
            "And the earth was without form, and void.\nI AM THAT I AM.\n");
}

TEST(ByteTokenizer, EncodesBytes) {
  test::TempDir dir;
  test::writeFile(dir.file("t.txt"), "Aé");
  const auto r = prepareCorpus(dir.file("t.txt"), PrepareOptions{});
  EXPECT_EQ(r.vocab, 257);  // 256 bytes and the end-of-document id
  EXPECT_EQ(openTokenStore(r.storeDir)->readAll(), (std::vector<int32_t>{65, 0xC3, 0xA9, 256}));
}

namespace {
std::string writeSpmCorpus(const test::TempDir& dir) {
  std::string text;
  const char* lines[] = {"In the beginning was the word and the word was deep.\n",
                         "Deep layers are lazy when the variance grows with depth.\n",
                         "Layer norm scaling keeps every layer useful.\n",
                         "The curse of depth is a curse on the deep layers.\n"};
  for (int i = 0; i < 400; ++i) text += lines[i % 4];
  auto path = dir.file("spm-corpus.txt");
  test::writeFile(path, text);
  return path;
}
}  // namespace

TEST(SpmTokenizer, TrainsCachesAndEncodesOutOfProcess) {
  if (!SpmTokenizer::toolsAvailable()) GTEST_SKIP() << "sentencepiece tools not installed";
  test::TempDir dir;
  auto corpus = writeSpmCorpus(dir);
  data::DataConfig dc;
  dc.corpus = corpus;
  dc.tokenizer = "spm:120";
  auto first = loadCorpusTokens(dc);
  EXPECT_EQ(first.vocabSize, 120);
  EXPECT_NE(first.tokenizerName.find("spm:"), std::string::npos);
  const auto firstTokens = first.tokens->readAll();
  EXPECT_GT(firstTokens.size(), 1000u);
  for (auto t : firstTokens) ASSERT_LT(t, 120);
  // Cached beside the corpus: the model and the token store.
  int models = 0, stores = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    const auto name = e.path().filename().string();
    models += name.find(".model") != std::string::npos;
    stores += name.find(".dlstore") != std::string::npos;
  }
  EXPECT_EQ(models, 1);
  EXPECT_EQ(stores, 1);
  auto again = loadCorpusTokens(dc);
  EXPECT_EQ(again.tokens->readAll(), firstTokens);
  SpmTokenizer tok(first.tokenizerName.substr(4));
  const auto firstLine = tok.encode("In the beginning was the word and the word was deep.\n");
  EXPECT_EQ(firstLine,
            std::vector<int32_t>(firstTokens.begin(),
                                 firstTokens.begin() + static_cast<long>(firstLine.size())));
  EXPECT_THROW(SpmTokenizer(dir.file("absent.model")), DataError);
}

// The caches are keyed on content: an edited corpus of exactly the same size gets a new
// model and new tokens, never the stale ones.
TEST(SpmTokenizer, AnEditOfTheSameSizeIsNotServedStaleTokens) {
  if (!SpmTokenizer::toolsAvailable()) GTEST_SKIP() << "sentencepiece tools not installed";
  test::TempDir dir;
  auto corpus = writeSpmCorpus(dir);
  data::DataConfig dc;
  dc.corpus = corpus;
  dc.tokenizer = "spm:120";
  auto first = loadCorpusTokens(dc);
  std::string text = test::readFile(corpus);
  for (auto& ch : text) {  // same length, other content
    if (ch == 'e') ch = 'q';
  }
  test::writeFile(corpus, text);
  auto edited = loadCorpusTokens(dc);
  EXPECT_NE(edited.tokenizerName, first.tokenizerName);  // another model file
  EXPECT_NE(edited.tokens->readAll(), first.tokens->readAll());
  SpmTokenizer tok(edited.tokenizerName.substr(4));
  auto direct = tok.encode(text);
  direct.push_back(tok.eosId());  // the file is one document
  EXPECT_EQ(direct, edited.tokens->readAll());
}

TEST(SpmTokenizer, VocabularySizesOutOfRangeAreRefusedByName) {
  for (const char* spec : {"spm:99999999999", "spm:3", "spm:2000000"}) {
    try {
      spmVocabSize(spec);
      ADD_FAILURE() << spec << " accepted";
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find(spec), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("vocabulary size"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(spmVocabSize("spm:32000"), 32000);
}

TEST(SpmTokenizer, TheCliStartsAndTrainsWithAnSpmTokenizer) {
  // The protobuf clash would crash a process linking both libraries before main(); the CLI
  // links LibTorch and must run SentencePiece out of process.
  if (!SpmTokenizer::toolsAvailable()) GTEST_SKIP() << "sentencepiece tools not installed";
  test::TempDir dir;
  auto corpus = writeSpmCorpus(dir);
  std::string out;
  int rc =
      test::runCommand(depthlab::test::cliPath() + " --db " + dir.file("runs.db") +
                           " --json train --preset tiny --steps 3 --tokenizer spm:100 --corpus " +
                           corpus + " --checkpoint-dir " + dir.file("ckpt"),
                       &out);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("\"finished\""), std::string::npos) << out;
}

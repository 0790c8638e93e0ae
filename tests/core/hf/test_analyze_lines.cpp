// `analyze --tokens FILE` on an imported model reads a line as a sequence (as `eval` does), never
// windows cut across lines; a text's windows say when they overlap; a second analysis says it
// replaced the first one's rows; `eval` on an import says the context it cut the rows into.
#include <gtest/gtest.h>

#include <string>

#include "hf/model_analysis.h"
#include "support/error_of.h"
#include "support/exported_model.h"
#include "util/python_env.h"

using namespace depthlab;
using test::errorOf;

namespace {

// A line of `n` ids starting at `first` (byte ids: all in the vocabulary).
std::string idLine(int first, int n) {
  std::string line;
  for (int i = 0; i < n; ++i) line += std::to_string(97 + (first + i) % 26) + " ";
  return line + "\n";
}

}  // namespace

TEST(AnalyzeLines, ATokensFileIsReadOneLineASequence) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  const auto run = test::importTrainedTinyModel(dir, s);
  // Lines 1 and 3 are long enough for 8 + 1 ids; line 2 is not and must not be joined to others.
  test::writeFile(dir.file("ids.txt"), idLine(0, 12) + idLine(5, 4) + idLine(9, 10));
  hf::ModelAnalysisOptions o;
  o.text.tokensFile = dir.file("ids.txt");
  o.sequences = 3;
  o.seqLen = 8;
  o.probes = {"variance"};
  const auto r = hf::analyzeImportedRun(s, run.id, o);
  EXPECT_EQ(r.sequences, 2);
  EXPECT_EQ(r.tokens, 16);
  EXPECT_NE(r.tokensHow.find("line(s) 1, 3"), std::string::npos) << r.tokensHow;
  EXPECT_NE(r.tokensHow.find("2 sequences, not 3"), std::string::npos) << r.tokensHow;
  EXPECT_FALSE(r.replacedEarlier);
  EXPECT_TRUE(hf::analyzeImportedRun(s, run.id, o).replacedEarlier);

  o.seqLen = 12;  // no line holds 13 ids (the longest has 12)
  const auto why = errorOf([&] { hf::analyzeImportedRun(s, run.id, o); });
  EXPECT_NE(why.find("no line holds 13 ids"), std::string::npos) << why;
  EXPECT_NE(why.find("--seq-len 11"), std::string::npos) << why;
}

TEST(AnalyzeLines, OverlappingWindowsOfAShortTextAreSaid) {
  if (util::pythonWithModule("tokenizers").empty()) {
    GTEST_SKIP() << "the exported model's tokenizer.json needs Python's tokenizers (torch2 env)";
  }
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  const auto run = test::importTrainedTinyModel(dir, s);
  test::writeFile(dir.file("short.txt"), "the curse of depth, briefly.");  // 28 bytes
  hf::ModelAnalysisOptions o;
  o.text.corpus = dir.file("short.txt");
  o.sequences = 2;
  o.seqLen = 16;
  o.probes = {"variance"};
  const auto r = hf::analyzeImportedRun(s, run.id, o);
  EXPECT_NE(r.tokensHow.find("windows overlap"), std::string::npos) << r.tokensHow;
}

TEST(AnalyzeLines, EvalOnAnImportSaysTheContextItUsedAndWhy) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  const auto run = test::importTrainedTinyModel(dir, s);  // 16 positions
  test::writeFile(dir.file("ids.txt"), idLine(0, 40) + idLine(5, 4));
  hf::EvalOptions o;
  o.text.tokensFile = dir.file("ids.txt");
  const auto r = hf::evaluateRun(s, run.id, o);
  EXPECT_EQ(r.context, 16);  // not the 1,024 the help had promised
  EXPECT_EQ(r.contextWhy, "the model's 16 positions");
  EXPECT_EQ(r.windows, 4);   // 40 ids: windows of 17 sharing one token (3), and the short line
  EXPECT_EQ(r.predictedTokens, 39 + 3);
  o.seqLen = 8;
  EXPECT_EQ(hf::evaluateRun(s, run.id, o).contextWhy, "--seq-len");
}

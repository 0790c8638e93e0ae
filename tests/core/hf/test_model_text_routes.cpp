// An imported model's text gives the same ids whichever tokenizer file the model ships: a small
// SentencePiece model (spm_train: BPE, byte fallback, Llama's settings) run as tokenizer.model
// through depthlab-spm-encode, and the same model converted to tokenizer.json by transformers'
// converter run through `tokenizers`, on text with newlines, blank lines, leading spaces, tabs
// and bytes outside the vocabulary. Newlines are kept (spm_encode dropped them), BOS comes first
// as the tokenizer adds it. Skips, saying why, without spm_train, depthlab-spm-encode (no
// libsentencepiece-dev at build time) or a Python with transformers.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "hf/hf_config.h"
#include "hf/model_text.h"
#include "support/build_paths.h"
#include "support/error_of.h"
#include "support/temp_dir.h"
#include "util/python_env.h"
#include "util/run_command.h"
#include "util/spm_program.h"

using namespace depthlab;
namespace fs = std::filesystem;

namespace {

const std::string kScript = depthlab::test::sourceDir() + "/tests/python/tokenizer_routes.py";

std::string missingReason() {
  if (!util::programExists("spm_train"))
    return "spm_train is not installed (sudo apt-get install sentencepiece)";
  if (util::spmEncodeProgram().empty()) {
    return "no depthlab-spm-encode (libsentencepiece-dev was not installed when the lab was built)";
  }
  if (util::pythonWithModule("transformers").empty()) {
    return "no Python with transformers and tokenizers (make build-torch2, or set DEPTHLAB_PYTHON)";
  }
  return "";
}

// A training text of a few thousand short lines over a small vocabulary.
std::string trainingText() {
  const char* words[] = {"in",    "the",   "beginning", "god",    "created", "heaven",   "and",
                         "earth", "was",   "without",   "form",   "void",    "darkness", "upon",
                         "face",  "of",    "deep",      "spirit", "moved",   "waters",   "said",
                         "let",   "there", "be",        "light"};
  std::string out;
  uint32_t x = 12345;
  auto next = [&x] { return (x = x * 1664525u + 1013904223u) >> 16; };  // an LCG's high bits
  for (int line = 0; line < 3000; ++line) {
    const uint32_t n = 3 + next() % 12;
    for (uint32_t k = 0; k < n; ++k) out += (k ? " " : "") + std::string(words[next() % 25]);
    out += line % 11 == 0 ? ", 1234 and 56.\n" : "\n";
  }
  return out;
}

// Trains the model into dir/spm/tokenizer.model and converts it into dir/json/tokenizer.json.
void makeModels(const test::TempDir& dir, bool bos) {
  test::writeFile(dir.file("train.txt"), trainingText());
  fs::create_directories(dir.file("spm"));
  fs::create_directories(dir.file("json"));
  std::string out;
  ASSERT_EQ(
      test::runCommand("spm_train --input=" + dir.file("train.txt") +
                           " --model_prefix=" + dir.file("spm/tokenizer") +
                           " --vocab_size=400 --model_type=bpe --byte_fallback=true"
                           " --normalization_rule_name=identity --remove_extra_whitespaces=false"
                           " --add_dummy_prefix=true --split_digits=true --unk_id=0 --bos_id=1"
                           " --eos_id=2 --pad_id=-1 --character_coverage=1.0 --minloglevel=2",
                       &out),
      0)
      << out;
  ASSERT_EQ(test::runCommand("'" + util::pythonWithModule("transformers") + "' '" + kScript +
                                 "' '" + dir.file("spm/tokenizer.model") + "' '" +
                                 dir.file("json") + "'" + (bos ? "" : " --no-bos"),
                             &out),
            0)
      << out;
  if (!bos) test::writeFile(dir.file("spm/tokenizer_config.json"), R"({"add_bos_token": false})");
}

constexpr const char* kText =
    "In the beginning God created the heaven and the earth.\n"
    "And the earth was without form,  and void;\n"
    "\n"
    "  and darkness was upon the face of the deep.\n"
    "\t\xC3\x89toile \xE2\x98\x83 12345 end\n";

}  // namespace

TEST(ModelTextRoutes, BothTokenizerFilesGiveTheSameIdsNewlinesAndBos) {
  if (auto why = missingReason(); !why.empty()) GTEST_SKIP() << why;
  test::TempDir dir;
  makeModels(dir, true);
  test::writeFile(dir.file("text.txt"), kText);
  const auto spm = hf::encodeWithModelTokenizer(dir.file("spm"), dir.file("text.txt"));
  const auto json = hf::encodeWithModelTokenizer(dir.file("json"), dir.file("text.txt"));
  EXPECT_NE(spm.how.find("tokenizer.model"), std::string::npos) << spm.how;
  EXPECT_NE(json.how.find("tokenizer.json"), std::string::npos) << json.how;
  EXPECT_EQ(spm.ids, json.ids);
  ASSERT_FALSE(spm.ids.empty());
  EXPECT_EQ(spm.ids.front(), 1) << "BOS first";
  EXPECT_EQ(std::count(spm.ids.begin(), spm.ids.end(), 1), 1);
  // Every newline is a token: byte fallback's <0x0A> (id 3 + 0x0A), none merged away.
  EXPECT_EQ(std::count(spm.ids.begin(), spm.ids.end(), 3 + 0x0A), 5);
}

TEST(ModelTextRoutes, NoBosWhereTheTokenizerAddsNone) {
  if (auto why = missingReason(); !why.empty()) GTEST_SKIP() << why;
  test::TempDir dir;
  makeModels(dir, false);
  test::writeFile(dir.file("text.txt"), kText);
  const auto spm = hf::encodeWithModelTokenizer(dir.file("spm"), dir.file("text.txt"));
  const auto json = hf::encodeWithModelTokenizer(dir.file("json"), dir.file("text.txt"));
  EXPECT_EQ(spm.ids, json.ids);
  ASSERT_FALSE(spm.ids.empty());
  EXPECT_NE(spm.ids.front(), 1);
  EXPECT_EQ(std::count(spm.ids.begin(), spm.ids.end(), 3 + 0x0A), 5);
}

TEST(ModelTextRoutes, AModelWithoutTokenizerIsRefusedNamingBothFiles) {
  test::TempDir dir;
  test::writeFile(dir.file("text.txt"), kText);
  const std::string why =
      test::errorOf([&] { hf::encodeWithModelTokenizer(dir.path(), dir.file("text.txt")); });
  EXPECT_NE(why.find("neither tokenizer.model nor tokenizer.json"), std::string::npos) << why;
  EXPECT_NE(why.find("--tokens"), std::string::npos) << why;
}

// The Hugging Face commands end to end through the real depthlab-cli: import-hf, analyze and eval
// on the model's own tokenizer.json, and export-hf of a trained run that imports back with the
// same evaluation loss. Skips without a Python that has transformers.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "hf/hf_export.h"
#include "support/build_paths.h"
#include "support/hf_fixtures.h"
#include "support/temp_dir.h"

using namespace depthlab;
namespace fs = std::filesystem;

namespace {
std::string cli() { return depthlab::test::cliPath(); }

nlohmann::json runJson(const std::string& args) {
  std::string out;
  const int rc = test::runCommand(cli() + args + " --json 2>/dev/null", &out);
  EXPECT_EQ(rc, 0) << args << "\n" << out;
  auto j = nlohmann::json::parse(out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << out;
  return j;
}
}  // namespace

TEST(HfCli, ImportAnalyzeEvalAndExportRoundTrip) {
  if (auto why = test::transformersMissingReason(); !why.empty()) GTEST_SKIP() << why;
  test::TempDir dir;
  const std::string db = " --db " + dir.file("runs.db");
  fs::create_directories(dir.file("model"));
  for (const auto& e : fs::directory_iterator(test::hfModelSet() + "/llama-bytes")) {
    fs::copy_file(e.path(), fs::path(dir.file("model")) / e.path().filename());
  }
  test::writeFile(dir.file("model/tokenizer.json"), hf::byteLevelTokenizerJson());
  std::string text;
  for (int i = 0; text.size() < 20000; ++i)
    text += "the curse of depth " + std::to_string(i % 31) + "\n";
  test::writeFile(dir.file("text.txt"), text);

  auto imp = runJson(db + " import-hf " + dir.file("model") + " --name tiny");
  ASSERT_EQ(imp["architecture"], "LlamaForCausalLM");
  EXPECT_EQ(imp["kv_heads"], 2);
  const int64_t id = imp["run_id"];
  auto an =
      runJson(db + " analyze --run " + std::to_string(id) + " --corpus " + dir.file("text.txt"));
  EXPECT_NE(an["tokenizer"].get<std::string>().find("tokenizer.json through Python tokenizers"),
            std::string::npos)
      << an.dump();
  EXPECT_EQ(an["tokens"], 2 * 64);  // the model has 64 positions: 2 sequences of 64
  auto ev = runJson(db + " eval --run " + std::to_string(id) + " --corpus " + dir.file("text.txt"));
  EXPECT_GT(ev["loss"].get<double>(), 0.0);
  EXPECT_EQ(ev["sequences"], 1);

  // Train a tiny Pre-LN run, export it, import the export: the same loss on the same text.
  std::string out;
  ASSERT_EQ(test::runCommand(
                cli() + db + " train --preset tiny --scheme pre_ln --steps 4 --corpus " +
                    dir.file("text.txt") + " --checkpoint-dir " + dir.file("ck") + " --quiet",
                &out),
            0)
      << out;
  const auto runs = runJson(db + " runs list");
  int64_t trained = 0;
  for (const auto& r : runs) {
    if (r["scheme"] == "pre_ln") trained = r["id"];
  }
  ASSERT_GT(trained, 0) << runs.dump();
  auto ex = runJson(db + " export-hf --run " + std::to_string(trained) + " --out " +
                    dir.file("exported"));
  EXPECT_EQ(ex["tokenizer"], "byte-level tokenizer.json");
  auto back = runJson(db + " import-hf " + dir.file("exported"));
  const std::string evalArgs = " --corpus " + dir.file("text.txt") + " --seq-len 32";
  const double original = runJson(db + " eval --run " + std::to_string(trained) + evalArgs)["loss"];
  const double reimported = runJson(
      db + " eval --run " + std::to_string(back["run_id"].get<int64_t>()) + evalArgs)["loss"];
  EXPECT_NEAR(original, reimported, 1e-4);

  // A multiple-choice task: the trained run (its bytes) and its export (a byte-level
  // tokenizer.json) give the same log-likelihoods and accuracy.
  test::writeFile(dir.file("task.jsonl"),
                  "{\"question\": \"the curse of\", \"choices\": [\"depth\", \"width\"], "
                  "\"answer\": 0}\n{\"question\": \"the curse of depth 1\", \"choices\": "
                  "[\"2\", \"x\", \"curse\"], \"answer\": \"curse\"}\n");
  const std::string task = " --task " + dir.file("task.jsonl");
  auto own = runJson(db + " eval --run " + std::to_string(trained) + task);
  auto viaExport =
      runJson(db + " eval --run " + std::to_string(back["run_id"].get<int64_t>()) + task);
  EXPECT_NE(own["tokenizer"].get<std::string>().find("bytes"), std::string::npos) << own.dump();
  ASSERT_EQ(own["docs"].size(), 2u);
  for (size_t d = 0; d < 2; ++d) {
    for (size_t c = 0; c < own["docs"][d]["loglikelihoods"].size(); ++c) {
      EXPECT_NEAR(own["docs"][d]["loglikelihoods"][c].get<double>(),
                  viaExport["docs"][d]["loglikelihoods"][c].get<double>(), 1e-3);
    }
  }
  EXPECT_EQ(own["docs"][1]["answer"], 2);
  EXPECT_EQ(own["acc"], viaExport["acc"]);
  EXPECT_NEAR(own["chance"].get<double>(), (0.5 + 1.0 / 3) / 2, 1e-12);
}

// Compare's warning before a depth trend or an LNS gain: runs that differ in corpus,
// tokenizer, sequence length or steps are named with their values; matched runs, different
// schemes, depths and seeds, and imported models are not warned about.
#include <gtest/gtest.h>

#include <functional>

#include "analysis/run_mismatch.h"
#include "experiment/presets.h"

using namespace depthlab;

namespace {

store::RunInfo runOf(int64_t id, const std::function<void(experiment::ExperimentConfig&)>& edit) {
  auto c = *experiment::presetConfig("cpu-demo");
  edit(c);
  store::RunInfo r;
  r.id = id;
  r.scheme = c.schemes.front();
  r.configJson = experiment::toJson(c).dump();
  return r;
}

}  // namespace

TEST(RunMismatch, RunsOfOneSetupButSchemeDepthAndSeedGetNoWarning) {
  const auto a = runOf(1, [](auto& c) { c.schemes = {"pre_ln"}; });
  const auto b = runOf(2, [](auto& c) {
    c.schemes = {"lns"};
    c.model.nLayers = 12;
    c.run.seed = 7;
  });
  EXPECT_TRUE(analysis::runMismatches({a, b}).empty());
  EXPECT_EQ(analysis::mismatchWarning({a, b}), "");
}

TEST(RunMismatch, TwoRunsOfDifferentSequenceLengthAreNamedWithBothValues) {
  const auto a = runOf(3, [](auto& c) { c.model.seqLen = 128; });
  const auto b = runOf(5, [](auto& c) { c.model.seqLen = 256; });
  const auto m = analysis::runMismatches({a, b});
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].key, "model.seqLen");
  EXPECT_EQ(m[0].message(), "runs 3 and 5 differ in sequence length: 128 vs 256");
}

TEST(RunMismatch, EachDifferingSettingIsOneMessageAndSharedValuesNameTheirRuns) {
  std::vector<store::RunInfo> runs;
  for (int64_t id : {1, 2, 3, 4}) {
    runs.push_back(runOf(id, [id](auto& c) {
      c.model.seqLen = id <= 2 ? 64 : 32;
      c.optim.steps = id == 4 ? 300 : 150;
      c.data.tokenizer = "byte";
      c.data.corpus = id == 1 ? "" : "/data/wiki.txt";
    }));
  }
  const auto m = analysis::runMismatches(runs);
  ASSERT_EQ(m.size(), 3u);  // corpus, sequence length, steps: in that order; tokenizer shared
  EXPECT_EQ(
      m[0].message(),
      "runs 1, 2, 3 and 4 differ in corpus: default (run 1) vs /data/wiki.txt (runs 2, 3, 4)");
  EXPECT_EQ(m[1].message(),
            "runs 1, 2, 3 and 4 differ in sequence length: 64 (runs 1, 2) vs 32 (runs 3, 4)");
  EXPECT_EQ(m[2].message(),
            "runs 1, 2, 3 and 4 differ in steps: 150 (runs 1, 2, 3) vs 300 (run 4)");
  EXPECT_EQ(analysis::mismatchWarning(runs),
            m[0].message() + "; " + m[1].message() + "; " + m[2].message());
}

TEST(RunMismatch, TokenizersDifferAndUnreadableConfigsAreLeftOut) {
  const auto a = runOf(1, [](auto& c) { c.data.tokenizer = "byte"; });
  const auto b = runOf(2, [](auto& c) { c.data.tokenizer = "spm:512"; });
  store::RunInfo broken;
  broken.id = 9;
  broken.configJson = "{not json";
  EXPECT_EQ(analysis::mismatchWarning({a, broken, b}),
            "runs 1 and 2 differ in tokenizer: byte vs spm:512");
  EXPECT_EQ(analysis::mismatchWarning({a, broken}), "");  // one readable run: nothing to compare
}

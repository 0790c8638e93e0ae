// `eval --run ID` with no text: a trained run's model over its own validation split, whole,
// which is the held-out tail of its corpus exactly as training split it (checked against the
// same tokens given as a file); an imported model has no split and says so.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>

#include "experiment/run_group.h"
#include "hf/model_analysis.h"
#include "support/model_fixtures.h"
#include "support/run_fixtures.h"
#include "support/temp_dir.h"

using namespace depthlab;

TEST(EvalValidationSplit, ATrainedRunIsEvaluatedOnItsHeldOutTailWhole) {
  test::TempDir dir;
  auto c = test::smallConfig(2);
  c.data.corpus = test::writeWordCorpus(dir, 60000);
  c.schemes = {"pre_ln"};
  c.optim.steps = 6;
  c.name = "eval";
  auto s = store::RunStore::open(dir.file("runs.db"));
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  const int64_t id = experiment::runGroup(c, s, o).members[0].runId;

  hf::EvalOptions e;
  e.text.validationSplit = true;
  const auto held = hf::evaluateRun(s, id, e);
  // The split, computed here from the bytes (the byte tokenizer: one token a byte, and the
  // end-of-document id 256 after the file): the last floor(n * valFraction) of them.
  std::ifstream in(c.data.corpus, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  const size_t n = bytes.size() + 1, from = n - static_cast<size_t>(static_cast<double>(n) * c.data.valFraction);
  EXPECT_EQ(held.predictedTokens, static_cast<int64_t>(n - from - 1));  // every next token once
  EXPECT_EQ(held.sequences, 1);
  EXPECT_NE(held.tokensHow.find("validation split"), std::string::npos) << held.tokensHow;
  std::string ids;
  for (size_t i = from; i < n; ++i) {
    ids += (i < bytes.size() ? std::to_string(static_cast<unsigned char>(bytes[i])) : "256") + " ";
  }
  test::writeFile(dir.file("val-ids.txt"), ids + "\n");
  hf::EvalOptions file;
  file.text.tokensFile = dir.file("val-ids.txt");
  const auto same = hf::evaluateRun(s, id, file);
  EXPECT_EQ(same.predictedTokens, held.predictedTokens);
  EXPECT_NEAR(same.loss, held.loss, 1e-9);
  // Close to the loss the run measured on its sampled validation windows.
  const auto val = s.latestScalars(id).at("loss_val").value;
  EXPECT_NEAR(held.loss, val, 0.25) << held.loss << " vs " << val;

  // Its first 1,000 tokens only: 999 predictions.
  e.text.maxTokens = 1000;
  const auto first = hf::evaluateRun(s, id, e);
  EXPECT_EQ(first.predictedTokens, 999);
  EXPECT_NE(first.tokensHow.find("the first 1000 tokens"), std::string::npos) << first.tokensHow;
  e.text.maxTokens = 0;
  // Both at once is refused.
  e.text.corpus = c.data.corpus;
  try {
    hf::evaluateRun(s, id, e);
    ADD_FAILURE() << "no error for a text and the split at once";
  } catch (const std::exception& err) {
    EXPECT_NE(std::string(err.what()).find("not two of them"), std::string::npos) << err.what();
  }
}

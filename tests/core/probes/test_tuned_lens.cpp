// The tuned lens: at its start (every translator zero) its statistics are the logit lens's; a few
// steps of training bring every translated block closer to the output (lower KL) and leave the
// last block's (the output itself) at 0; the model's weights get no gradient and keep their
// grad mode; the file round-trips, and a changed byte or another model's shape is refused.
#include <gtest/gtest.h>

#include <fstream>

#include "probes/logit_lens.h"
#include "probes/traced_forward.h"
#include "probes/tuned_lens.h"
#include "support/model_fixtures.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

struct Fixture {
  experiment::ExperimentConfig c = test::smallConfig(4);
  model::Decoder m{nullptr};
  torch::Tensor text;  // (6, T)
  Fixture() {
    torch::manual_seed(2);
    c.model.initStd = 0.2;  // outputs far from uniform: the lens has something to learn
    m = model::Decoder(c.model, c.options, "pre_ln");
    text = torch::randint(0, c.model.vocabSize, {6, c.model.seqLen}, torch::kInt64);
  }
  probes::LogitLens through(const probes::TunedLens& lens) {
    torch::NoGradGuard ng;
    m->eval();
    model::ForwardTrace trace;
    probes::tracedForward(m, text, trace);
    auto r = probes::tunedLensOfTrace(m, lens, trace, text);
    m->train();
    return r;
  }
};

}  // namespace

TEST(TunedLens, AtItsStartItIsTheLogitLens) {
  Fixture f;
  const auto tuned = f.through(probes::identityLens(f.m));
  torch::NoGradGuard ng;
  f.m->eval();
  model::ForwardTrace trace;
  probes::tracedForward(f.m, f.text, trace);
  const auto logit = probes::logitLensOfTrace(f.m, trace, f.text);
  EXPECT_EQ(tuned.kl, logit.kl);
  EXPECT_EQ(tuned.top1, logit.top1);
  EXPECT_EQ(tuned.entropy, logit.entropy);
  EXPECT_EQ(tuned.crossEntropy, logit.crossEntropy);
  EXPECT_EQ(tuned.settleDepth, logit.settleDepth);
}

TEST(TunedLens, TrainingBringsEveryBlockCloserToTheOutputAndLeavesTheModelAlone) {
  Fixture f;
  const auto before = f.through(probes::identityLens(f.m));
  const auto weights = f.m->embed_tokens->weight.clone();
  probes::TunedLensTraining o;
  o.steps = 30;
  o.rowsPerStep = 3;  // two batches of the six rows, in turn
  std::vector<double> kls;
  const auto lens =
      probes::trainTunedLens(f.m, f.text, o, [&](int, int, double kl) { kls.push_back(kl); });
  ASSERT_EQ(kls.size(), 30u);
  EXPECT_LT(kls[29], 0.6 * kls[1]);  // the same batch (rows 3-5) at steps 2 and 30
  const auto after = f.through(lens);
  for (size_t l = 0; l + 1 < after.kl.size(); ++l) {
    EXPECT_LT(after.kl[l], 0.8 * before.kl[l]) << l;
  }
  EXPECT_FLOAT_EQ(after.kl.back(), 0.0f);  // the output needs no translator
  EXPECT_TRUE(torch::equal(weights, f.m->embed_tokens->weight));
  for (const auto& p : f.m->parameters()) {
    EXPECT_TRUE(p.requires_grad());
    EXPECT_FALSE(p.grad().defined());
  }
  EXPECT_TRUE(f.m->is_training());
}

TEST(TunedLens, TheFileRoundTripsAndIsRefusedWhenChangedOrForAnotherModel) {
  Fixture f;
  test::TempDir dir;
  probes::TunedLensTraining o;
  o.steps = 3;
  const auto lens = probes::trainTunedLens(f.m, f.text, o);
  const std::string path = dir.file("lens.pt");
  const std::string hash = probes::saveTunedLens(lens, path);
  EXPECT_EQ(hash.size(), 16u);
  const auto back = probes::loadTunedLens(path, f.m);
  for (size_t l = 0; l < lens.weight.size(); ++l) {
    EXPECT_TRUE(torch::equal(back.weight[l], lens.weight[l]));
    EXPECT_TRUE(torch::equal(back.bias[l], lens.bias[l]));
  }
  auto deeper = test::smallConfig(5);
  model::Decoder other(deeper.model, deeper.options, "pre_ln");
  EXPECT_THROW(probes::loadTunedLens(path, other), std::runtime_error);
  {
    std::fstream io(path, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(-20, std::ios::end);
    io.put('\x7f');
  }
  try {
    probes::loadTunedLens(path, f.m);
    FAIL() << "a changed file was loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("does not match its hash"), std::string::npos) << e.what();
  }
  EXPECT_THROW(probes::loadTunedLens(dir.file("none.pt"), f.m), std::runtime_error);
}

// Trainer equivalences and known answers: overfitting one batch, gradient accumulation
// equals a larger batch, resume equals not stopping, identical batches for paired runs,
// and a golden table of the first 10 losses produced by the PyTorch reference.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "data/token_dataset.h"
#include "io/safetensors.h"
#include "support/model_fixtures.h"
#include "support/python_reference.h"
#include "support/run_fixtures.h"
#include "support/temp_dir.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

using namespace depthlab;

namespace {

data::TokenDataset makeData(const experiment::ExperimentConfig& c) {
  return data::TokenDataset(test::patternTokens(20000, c.model.vocabSize), c.model.vocabSize,
                            0.1, c.model.seqLen, c.optim.batchSize);
}

// Golden set-up: 2 blocks, width 32, constant lr 1e-2, one fixed batch of 4 x 16 tokens.
experiment::ExperimentConfig goldenConfig() {
  auto c = test::smallConfig(2);
  c.optim.lr = 1e-2;
  c.optim.warmupSteps = 0;
  c.optim.minLrRatio = 1.0;
  c.run.seed = 42;
  return c;
}

data::TokenBatch goldenBatch(const experiment::ExperimentConfig& c) {
  data::TokenBatch b;
  b.batch = 4;
  b.seqLen = c.model.seqLen;
  for (int i = 0; i < b.batch * b.seqLen; ++i) {
    b.inputs.push_back((i * 5 + 3) % c.model.vocabSize);
    b.targets.push_back((i * 5 + 8) % c.model.vocabSize);
  }
  return b;
}

// First 10 training losses of goldenConfig()/goldenBatch() under pre_ln and lns, computed by
// bench/reference_model.py (`golden` mode, torch.optim.Adam) from the weights this build
// initialises. Regenerate: DEPTHLAB_GOLDEN_EXPORT=/tmp/g ./test_core_train
// --gtest_filter='*Golden*' then run the printed command.
const std::map<std::string, std::vector<double>> kGoldenLosses = {
    {"pre_ln", {4.149764, 3.760931, 3.510393, 3.217848, 2.961398, 2.715069, 2.471849, 2.240664, 2.040391, 1.759098}},
    {"lns", {4.147818, 3.730553, 3.444454, 3.194723, 2.928535, 2.682605, 2.435351, 2.187392, 1.944552, 1.707794}},
};

}  // namespace

TEST(Trainer, OverfitsOneBatch) {
  auto c = goldenConfig();
  c.optim.lr = 3e-3;
  train::Trainer t(experiment::trainerConfig(c), "lns", torch::kCPU);
  auto b = goldenBatch(c);
  double first = 0, last = 0;
  for (int s = 0; s < 150; ++s) {
    auto r = t.trainStepOn({b}, s);
    if (s == 0) first = r.loss;
    last = r.loss;
  }
  EXPECT_GT(first, 4.0);
  EXPECT_LT(last, 0.05) << "from " << first;
}

TEST(Trainer, GradientAccumulationEqualsALargerBatch) {
  auto c = test::smallConfig(3);
  auto data = makeData(c);
  c.optim.batchSize = 2;
  std::vector<data::TokenBatch> micro;
  data::TokenBatch big;
  big.seqLen = c.model.seqLen;
  for (int i = 0; i < 4; ++i) {
    auto full = data.trainBatch(1, 0, i);  // 4 rows each; keep 2
    data::TokenBatch m;
    m.batch = 2;
    m.seqLen = full.seqLen;
    m.inputs.assign(full.inputs.begin(), full.inputs.begin() + 2 * full.seqLen);
    m.targets.assign(full.targets.begin(), full.targets.begin() + 2 * full.seqLen);
    micro.push_back(m);
    big.batch += 2;
    big.inputs.insert(big.inputs.end(), m.inputs.begin(), m.inputs.end());
    big.targets.insert(big.targets.end(), m.targets.begin(), m.targets.end());
  }
  auto ca = c;
  ca.optim.gradAccum = 4;
  train::Trainer accum(experiment::trainerConfig(ca), "pre_ln", torch::kCPU);
  train::Trainer single(experiment::trainerConfig(c), "pre_ln", torch::kCPU);
  auto ra = accum.trainStepOn(micro, 2);
  auto rs = single.trainStepOn({big}, 2);
  EXPECT_NEAR(ra.loss, rs.loss, 1e-6);
  EXPECT_NEAR(ra.gradNorm, rs.gradNorm, 1e-5 * rs.gradNorm);
  // The accumulated gradient equals the big batch's (grads stay until the next zero_grad).
  auto pa = accum.model()->named_parameters();
  for (const auto& p : single.model()->named_parameters()) {
    EXPECT_TRUE(torch::allclose(p.value().grad(), pa[p.key()].grad(), 1e-4, 1e-8)) << p.key();
  }
}

TEST(Trainer, ResumeGivesTheSameNextLossesAsNotStopping) {
  test::TempDir dir;
  auto c = test::smallConfig(3);
  auto data = makeData(c);
  train::Trainer straight(experiment::trainerConfig(c), "lns", torch::kCPU);
  std::vector<double> losses;
  for (int s = 0; s < 8; ++s) {
    losses.push_back(straight.trainStep(data, s).loss);
    if (s == 4) {
      train::CheckpointMeta meta = test::checkpointMeta(5, "lns", experiment::toJson(c), 1);
      train::saveCheckpoint(dir.file("ckpt"), straight.model(), &straight.optimizer(), meta);
    }
  }
  train::Trainer resumed(experiment::trainerConfig(c), "lns", torch::kCPU);
  resumed.trainStep(data, 0);  // disturb its state: loading must replace it entirely
  auto meta = train::loadCheckpoint(dir.file("ckpt"), resumed.model(), &resumed.optimizer(),
                                    torch::kCPU);
  EXPECT_EQ(meta.step, 5);
  EXPECT_EQ(meta.scheme, "lns");
  for (int s = 5; s < 8; ++s) {
    EXPECT_EQ(resumed.trainStep(data, s).loss, losses[static_cast<size_t>(s)]) << "step " << s;
  }
}

TEST(Trainer, CheckpointRejectsDamage) {
  test::TempDir dir;
  auto c = test::smallConfig(2);
  train::Trainer t(experiment::trainerConfig(c), "pre_ln", torch::kCPU);
  train::saveCheckpoint(dir.file("ok"), t.model(), &t.optimizer(), test::checkpointMeta(3, "pre_ln", {}, 0));
  std::string bytes = test::readFile(dir.file("ok"));
  test::writeFile(dir.file("truncated"), bytes.substr(0, bytes.size() / 2));
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x40;
  test::writeFile(dir.file("flipped"), flipped);
  test::writeFile(dir.file("garbage"), "not a checkpoint at all");
  for (const char* name : {"truncated", "flipped", "garbage"}) {
    EXPECT_THROW(train::loadCheckpoint(dir.file(name), t.model(), nullptr, torch::kCPU),
                 train::CheckpointError)
        << name;
  }
  train::Trainer other(experiment::trainerConfig(test::smallConfig(3)), "pre_ln", torch::kCPU);  // wrong depth
  EXPECT_THROW(train::loadCheckpoint(dir.file("ok"), other.model(), nullptr, torch::kCPU),
               train::CheckpointError);
  EXPECT_EQ(train::readCheckpointMeta(dir.file("ok")).step, 3);
}

TEST(Trainer, PairedRunsSeeIdenticalBatchesAndStartFromIdenticalWeights) {
  auto c = test::smallConfig(3);
  auto data = makeData(c);
  auto a = data.trainBatch(c.run.seed, 17, 0);
  auto b = data.trainBatch(c.run.seed, 17, 0);
  EXPECT_EQ(a.inputs, b.inputs);
  EXPECT_NE(a.inputs, data.trainBatch(c.run.seed, 18, 0).inputs);
  EXPECT_NE(a.inputs, data.trainBatch(c.run.seed + 1, 17, 0).inputs);
  train::Trainer pre(experiment::trainerConfig(c), "pre_ln", torch::kCPU), lns(experiment::trainerConfig(c), "lns", torch::kCPU);
  auto lp = lns.model()->named_parameters();
  for (const auto& p : pre.model()->named_parameters()) {
    EXPECT_TRUE(torch::equal(p.value(), lp[p.key()])) << p.key();
  }
}

TEST(Trainer, NonFiniteLossIsReportedAndNotStepped) {
  auto c = test::smallConfig(2);
  train::Trainer t(experiment::trainerConfig(c), "pre_ln", torch::kCPU);
  {
    torch::NoGradGuard ng;
    t.model()->lm_head->weight.fill_(std::numeric_limits<float>::infinity());
  }
  auto before = t.model()->block(0)->self_attn->q_proj->weight.clone();
  auto r = t.trainStepOn({goldenBatch(c)}, 3);
  EXPECT_FALSE(r.finite);
  EXPECT_TRUE(torch::equal(before, t.model()->block(0)->self_attn->q_proj->weight));
}

TEST(Trainer, GoldenFirstTenLosses) {
  auto c = goldenConfig();
  const char* exportDir = std::getenv("DEPTHLAB_GOLDEN_EXPORT");
  for (const auto& [scheme, expected] : kGoldenLosses) {
    SCOPED_TRACE(scheme);
    train::Trainer t(experiment::trainerConfig(c), scheme, torch::kCPU);
    auto batch = goldenBatch(c);
    if (exportDir) {
      std::string d = std::string(exportDir) + "/" + scheme;
      std::filesystem::create_directories(d);
      experiment::saveConfigFile(c, d + "/config.json");
      io::saveSafetensors(d + "/weights.safetensors", io::namedTensors(*t.model()));
      auto [x, y] = t.toTensors(batch);
      io::saveSafetensors(d + "/tokens.safetensors", {{"inputs", x}, {"targets", y}});
      std::printf("/usr/bin/python3 bench/reference_model.py golden --config %s/config.json "
                  "--scheme %s --weights %s/weights.safetensors --tokens %s/tokens.safetensors\n",
                  d.c_str(), scheme.c_str(), d.c_str(), d.c_str());
    }
    for (int s = 0; s < 10; ++s) {
      EXPECT_NEAR(t.trainStepOn({batch}, s).loss, expected[static_cast<size_t>(s)], 2e-4)
          << "step " << s;
    }
  }
}

TEST(Trainer, GroupedQueryBiasesAndTiedEmbeddingsTrainAndResume) {
  // The shapes of imported Qwen2 / Mistral models are config fields: they train like any other.
  test::TempDir dir;
  auto c = test::smallConfig(3);
  c.model.nKvHeads = 2;      // 4 query heads share 2 key/value heads
  c.model.qkvBias = true;
  c.model.tieEmbeddings = true;
  auto data = makeData(c);
  train::Trainer t(experiment::trainerConfig(c), "lns", torch::kCPU);
  EXPECT_TRUE(t.model()->lm_head.is_empty());
  EXPECT_EQ(t.model()->block(0)->self_attn->k_proj->weight.size(0), 2 * 8);  // K x D rows
  EXPECT_TRUE(t.model()->block(0)->self_attn->q_proj->bias.defined());
  const auto embedBefore = t.model()->embed_tokens->weight.clone();
  std::vector<double> losses;
  for (int s = 0; s < 30; ++s) losses.push_back(t.trainStep(data, s).loss);
  EXPECT_LT(losses.back(), losses.front() - 0.5);
  EXPECT_FALSE(torch::equal(embedBefore, t.model()->embed_tokens->weight));
  train::saveCheckpoint(dir.file("ckpt"), t.model(), &t.optimizer(),
                        test::checkpointMeta(30, "lns", experiment::toJson(c), 1));
  train::Trainer resumed(experiment::trainerConfig(c), "lns", torch::kCPU);
  train::loadCheckpoint(dir.file("ckpt"), resumed.model(), &resumed.optimizer(), torch::kCPU);
  EXPECT_EQ(resumed.trainStep(data, 30).loss, t.trainStep(data, 30).loss);
}

TEST(Trainer, CudaGraphsStayOffOnTheCpu) {
  // The switch is for CUDA devices only: on the CPU it reads back off and the update is the
  // eager one (no graph step is made).
  auto c = test::smallConfig(2);
  auto data = makeData(c);
  train::Trainer plain(experiment::trainerConfig(c), "lns", torch::kCPU);
  train::Trainer asked(experiment::trainerConfig(c), "lns", torch::kCPU);
  asked.setCudaGraphs(true);
  EXPECT_FALSE(asked.cudaGraphs());
  for (int s = 0; s < 3; ++s) {
    EXPECT_DOUBLE_EQ(plain.trainStep(data, s).loss, asked.trainStep(data, s).loss);
  }
  EXPECT_EQ(asked.cudaGraphReplays(), 0);
  EXPECT_EQ(asked.cudaGraphCaptures(), 0);
}

// The new schemes' extra parameters (DyT's alphas and the embeddings' scalar, HybridNorm's and
// OLMo 2's q/k/v norms) train as torch.optim.Adam trains them in the independent reference
// (bench/reference_model.py, `golden` mode) from the same weights: ten losses agree. A
// parameter the trainer leaves out of its gradient list (never cleared: its gradients summed
// over steps; or never computed on the row split) drifts from the reference within a few steps.
TEST(Trainer, NewSchemesTrainEveryParameterAsPyTorchAdamDoes) {
  if (auto why = test::pythonTorchMissingReason(); !why.empty()) GTEST_SKIP() << why;
  auto c = goldenConfig();
  for (const char* scheme : {"dyt", "hybridnorm", "olmo2"}) {
    SCOPED_TRACE(scheme);
    test::TempDir dir;
    train::Trainer t(experiment::trainerConfig(c), scheme, torch::kCPU);
    auto batch = goldenBatch(c);
    experiment::saveConfigFile(c, dir.file("config.json"));
    io::saveSafetensors(dir.file("weights.safetensors"), io::namedTensors(*t.model()));
    auto [x, y] = t.toTensors(batch);
    io::saveSafetensors(dir.file("tokens.safetensors"), {{"inputs", x}, {"targets", y}});
    std::string out;
    ASSERT_EQ(test::runReference("golden --config " + dir.file("config.json") + " --scheme " +
                                     scheme + " --weights " + dir.file("weights.safetensors") +
                                     " --tokens " + dir.file("tokens.safetensors"),
                                 &out),
              0)
        << out;
    const auto losses = nlohmann::json::parse(out.substr(out.find('{')))["losses"];
    ASSERT_EQ(losses.size(), 10u);
    for (int s = 0; s < 10; ++s) {
      EXPECT_NEAR(t.trainStepOn({batch}, s).loss, losses[static_cast<size_t>(s)].get<double>(),
                  2e-4)
          << "step " << s;
    }
  }
}

// GPU checks (ctest label `gpu`): each test skips, saying why, where LibTorch sees no CUDA
// device (always with Debian's CPU-only libtorch, and the torch2 configuration on a machine
// without a GPU). On a GPU: every scheme's first losses equal the CPU's in fp32, bf16 autocast
// trains, every probe equals the CPU kernels' numbers, checkpoints move both ways, and a
// Pre-LN/LNS pair runs end to end through the store (train, resume, analyze) on cuda.
#include <gtest/gtest.h>

#include <cmath>

#include "data/token_dataset.h"
#include "experiment/analyze.h"
#include "experiment/run_group.h"
#include "probes/depth_probes.h"
#include "support/gpu_fixtures.h"
#include "support/model_fixtures.h"
#include "support/run_fixtures.h"
#include "support/temp_dir.h"
#include "train/checkpoint.h"
#include "experiment/micro_batch.h"
#include "train/trainer.h"

using namespace depthlab;

namespace {

using test::kGpu;

void expectRelClose(const std::vector<float>& cpu, const std::vector<float>& gpu, double rel,
                    const char* what) {
  ASSERT_EQ(cpu.size(), gpu.size()) << what;
  for (size_t i = 0; i < cpu.size(); ++i) {
    if (std::isnan(cpu[i])) {
      EXPECT_TRUE(std::isnan(gpu[i])) << what << "[" << i << "]";
      continue;
    }
    EXPECT_NEAR(cpu[i], gpu[i], rel * std::max(1.0, std::fabs(double(cpu[i]))))
        << what << "[" << i << "]";
  }
}

std::string writeCorpus(const test::TempDir& dir) { return test::writeWordCorpus(dir); }

}  // namespace

TEST(Cuda, EverySchemeGivesTheCpuLossesInFp32) {
  REQUIRE_CUDA();
  auto c = test::smallConfig(4);
  auto data = test::gpuPatternData(c);
  for (const auto& scheme : experiment::kSchemes) {
    SCOPED_TRACE(scheme);
    train::Trainer cpu(experiment::trainerConfig(c), scheme, torch::kCPU), gpu(experiment::trainerConfig(c), scheme, kGpu);
    for (int s = 0; s < 5; ++s) {
      const double a = cpu.trainStep(data, s).loss, b = gpu.trainStep(data, s).loss;
      EXPECT_NEAR(a, b, 1e-4 * std::max(1.0, std::fabs(a))) << "step " << s;
    }
  }
}

TEST(Cuda, Bf16AutocastTrains) {
  REQUIRE_CUDA();
  auto c = test::smallConfig(4);
  c.run.bf16 = true;
  auto data = test::gpuPatternData(c);
  for (const char* scheme : {"pre_ln", "lns"}) {
    SCOPED_TRACE(scheme);
    train::Trainer t(experiment::trainerConfig(c), scheme, kGpu);
    double first = t.trainStep(data, 0).loss, last = first;
    for (int s = 1; s < 30; ++s) last = t.trainStep(data, s).loss;
    EXPECT_TRUE(std::isfinite(last));
    EXPECT_LT(last, first);
  }
}

TEST(Cuda, ProbesEqualTheCpuKernels) {
  REQUIRE_CUDA();
  auto c = test::smallConfig(4);
  auto data = test::gpuPatternData(c);
  train::Trainer t(experiment::trainerConfig(c), "lns", torch::kCPU);
  for (int s = 0; s < 10; ++s) t.trainStep(data, s);  // away from the symmetric init
  auto b = data.probeBatch(4);
  auto opts = torch::TensorOptions().dtype(torch::kInt64);
  auto x = torch::from_blob(b.inputs.data(), {b.batch, b.seqLen}, opts).clone();
  auto y = torch::from_blob(b.targets.data(), {b.batch, b.seqLen}, opts).clone();
  auto& m = t.model();
  const auto cpu = probes::runForwardProbes(m, x, y, {false, true});
  const auto cpuPrune = probes::singleLayerPruning(m, x, y, false);
  const auto cpuBlock = probes::blockPruning(m, x, y, cpu.angularMatrix, false);
  const auto cpuJac = probes::jacobianToIdentity(m, x, 2, 7);
  m->to(kGpu);
  auto xg = x.to(kGpu), yg = y.to(kGpu);
  const auto gpu = probes::runForwardProbes(m, xg, yg, {false, true});
  expectRelClose(cpu.variance, gpu.variance, 1e-4, "variance");
  expectRelClose(cpu.normVarAttn, gpu.normVarAttn, 1e-4, "normVarAttn");
  expectRelClose(cpu.normVarFfn, gpu.normVarFfn, 1e-4, "normVarFfn");
  expectRelClose(cpu.angularAdjacent, gpu.angularAdjacent, 1e-4, "angularAdjacent");
  expectRelClose(cpu.blockInfluence, gpu.blockInfluence, 1e-4, "blockInfluence");
  expectRelClose(cpu.effectiveness, gpu.effectiveness, 1e-4, "effectiveness");
  expectRelClose(cpu.angularMatrix, gpu.angularMatrix, 1e-4, "angularMatrix");
  EXPECT_NEAR(cpu.probeLoss, gpu.probeLoss, 1e-4 * cpu.probeLoss);
  const auto gpuPrune = probes::singleLayerPruning(m, xg, yg, false);
  expectRelClose(cpuPrune.delta, gpuPrune.delta, 1e-4, "pruning");
  expectRelClose(cpuPrune.standardError, gpuPrune.standardError, 1e-4, "pruning error");
  const auto gpuBlock = probes::blockPruning(m, xg, yg, gpu.angularMatrix, false);
  expectRelClose(cpuBlock.delta, gpuBlock.delta, 1e-4, "blockPruning");
  expectRelClose(cpuBlock.standardError, gpuBlock.standardError, 1e-4, "blockPruning error");
  expectRelClose(cpuBlock.bestStart, gpuBlock.bestStart, 0, "bestStart");
  expectRelClose(cpuJac, probes::jacobianToIdentity(m, xg, 2, 7), 1e-4, "jacobian");
}

TEST(Cuda, CheckpointsMoveBetweenDevicesBothWays) {
  REQUIRE_CUDA();
  test::TempDir dir;
  auto c = test::smallConfig(2);
  auto data = test::gpuPatternData(c);
  train::Trainer gpu(experiment::trainerConfig(c), "lns", kGpu);
  for (int s = 0; s < 3; ++s) gpu.trainStep(data, s);
  train::saveCheckpoint(dir.file("from-gpu"), gpu.model(), &gpu.optimizer(), test::checkpointMeta(3, "lns", {}, 1));
  train::Trainer cpu(experiment::trainerConfig(c), "lns", torch::kCPU);
  ASSERT_NO_THROW(
      train::loadCheckpoint(dir.file("from-gpu"), cpu.model(), &cpu.optimizer(), torch::kCPU));
  auto pg = gpu.model()->parameters(), pc = cpu.model()->parameters();
  for (size_t i = 0; i < pg.size(); ++i) EXPECT_TRUE(torch::equal(pg[i].cpu(), pc[i]));
  // ... and back: both continue to the same loss.
  cpu.trainStep(data, 3);
  train::saveCheckpoint(dir.file("from-cpu"), cpu.model(), &cpu.optimizer(), test::checkpointMeta(4, "lns", {}, 1));
  train::Trainer gpu2(experiment::trainerConfig(c), "lns", kGpu);
  ASSERT_NO_THROW(
      train::loadCheckpoint(dir.file("from-cpu"), gpu2.model(), &gpu2.optimizer(), kGpu));
  const double a = cpu.trainStep(data, 4).loss, b = gpu2.trainStep(data, 4).loss;
  EXPECT_NEAR(a, b, 1e-4 * std::max(1.0, a));
}

TEST(Cuda, PreLnLnsPairRunsThroughTheStore) {
  REQUIRE_CUDA();
  test::TempDir dir;
  auto store = store::RunStore::open(dir.file("runs.db"));
  auto c = test::smallConfig(3);
  c.data.corpus = writeCorpus(dir);
  c.optim.steps = 12;
  c.run.evalEvery = 5;
  c.run.device = "cuda";
  c.run.bf16 = true;
  c.run.checkpointEvery = 6;
  c.name = "gpu-pair";
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  auto r = experiment::runGroup(c, store, o);
  ASSERT_EQ(r.members.size(), 2u);
  for (const auto& m : r.members) {
    auto run = store.run(m.runId);
    ASSERT_TRUE(run);
    EXPECT_EQ(run->status, store::RunStatus::Finished) << m.scheme;
    EXPECT_EQ(run->device.rfind("cuda:0", 0), 0u) << run->device;
    EXPECT_EQ(store.scalarSeries(m.runId, "loss_train").size(), 12u);
    auto variance = store.layerSeries(m.runId, "variance");
    EXPECT_EQ(variance.nLayers, 3);
    EXPECT_FALSE(variance.steps.empty());
    // analyze on cuda writes the probes again at the checkpoint's step
    auto a = experiment::analyzeCheckpoint(store, m.runId, std::nullopt,
                                           experiment::parseProbeList("all"));
    EXPECT_EQ(a.step, 12);
    EXPECT_GT(a.valuesWritten, 0u);
  }
}

TEST(Cuda, MicroBatchIsChosenFromFreeMemoryKeepingTheGlobalBatch) {
  REQUIRE_CUDA();
  auto c = test::smallConfig(2);
  c.schemes = {"pre_ln", "lns"};
  c.optim.batchSize = 8;
  c.optim.gradAccum = 4;
  c.optim.autoMicroBatch = true;
  const auto line = experiment::chooseMicroBatch(c, kGpu);
  EXPECT_FALSE(line.empty());
  EXPECT_EQ(c.optim.batchSize * c.optim.gradAccum, 32);
  EXPECT_EQ(c.optim.batchSize, 32) << line;  // a tiny model: the whole global batch fits
}

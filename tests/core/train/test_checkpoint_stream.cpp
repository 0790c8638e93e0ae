// Streaming checkpoints (format version 2): an exact round trip of weights and AdamW state,
// version-1 files still loading, a write that fails part-way (a full disk, as a file-size limit)
// leaving every earlier file intact, damage found before or during a load, and a model of a few
// hundred MB saved and loaded within a measured memory bound.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "experiment/experiment_config.h"
#include "support/model_fixtures.h"
#include "support/run_fixtures.h"
#include "support/temp_dir.h"
#include "train/checkpoint.h"
#include "train/checkpoint_tensors.h"
#include "train/trainer.h"
#include "util/content_hash.h"
#include "util/process_memory.h"

using namespace depthlab;
namespace fs = std::filesystem;

namespace {

// A trainer whose weights and AdamW moments are all random: a mixed-up tensor would show.
std::unique_ptr<train::Trainer> randomTrainer(const experiment::ExperimentConfig& c, int seed) {
  torch::manual_seed(seed);
  auto t = std::make_unique<train::Trainer>(experiment::trainerConfig(c), "lns", torch::kCPU);
  train::createMissingOptimizerState(t->optimizer());
  torch::NoGradGuard noGrad;
  for (auto& nt : train::optimizerSnapshot(t->optimizer()).tensors) nt.tensor.uniform_(0, 1);
  for (auto& p : t->model()->parameters()) p.normal_();
  return t;
}

std::vector<torch::Tensor> everything(train::Trainer& t) {
  std::vector<torch::Tensor> out;
  for (auto& nt : train::modelTensors(t.model())) out.push_back(nt.tensor.clone());
  for (auto& nt : train::optimizerSnapshot(t.optimizer()).tensors) out.push_back(nt.tensor.clone());
  return out;
}

void expectEqual(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << "tensor " << i;
}

// The version-1 writer as it was (LibTorch archives, FNV-1a), kept to make old files.
void writeVersion1(const std::string& path, train::Trainer& t, const train::CheckpointMeta& meta) {
  nlohmann::json j = {{"step", meta.step},
                      {"scheme", meta.scheme},
                      {"run_id", meta.runId},
                      {"config", meta.config},
                      {"store_id", meta.storeId}};
  std::ostringstream model, optim;
  {
    torch::serialize::OutputArchive a;
    t.model()->save(a);
    a.save_to(model);
  }
  {
    torch::serialize::OutputArchive a;
    t.optimizer().save(a);
    a.save_to(optim);
  }
  std::string body("DLCKPT\0\1", 8);
  const uint32_t version = 1;
  body.append(reinterpret_cast<const char*>(&version), 4);
  for (const std::string& part : {j.dump(), model.str(), optim.str()}) {
    const uint64_t n = part.size();
    body.append(reinterpret_cast<const char*>(&n), 8);
    body += part;
  }
  const uint64_t sum = util::fnv1a(body);
  body.append(reinterpret_cast<const char*>(&sum), 8);
  test::writeFile(path, body);
}

}  // namespace

TEST(CheckpointStream, RoundTripIsExactForWeightsAndAdamState) {
  test::TempDir dir;
  const auto c = test::smallConfig(3);
  auto a = randomTrainer(c, 1);
  const std::string sum =
      train::saveCheckpoint(dir.file("a.ckpt"), a->model(), &a->optimizer(),
                            test::checkpointMeta(7, "lns", experiment::toJson(c), 2));
  EXPECT_EQ(sum.size(), 16u);
  auto b = randomTrainer(c, 2);  // other values everywhere: loading must replace them all
  const auto meta =
      train::loadCheckpoint(dir.file("a.ckpt"), b->model(), &b->optimizer(), torch::kCPU);
  EXPECT_EQ(meta.step, 7);
  EXPECT_EQ(meta.runId, 2);
  EXPECT_EQ(meta.checksum, sum);
  expectEqual(everything(*a), everything(*b));
  EXPECT_EQ(train::readCheckpointMeta(dir.file("a.ckpt")).checksum, sum);
  EXPECT_NO_THROW(train::verifyCheckpoint(dir.file("a.ckpt"), {}));
  EXPECT_FALSE(fs::exists(dir.file("a.ckpt.tmp")));
}

TEST(CheckpointStream, Version1FilesStillLoad) {
  test::TempDir dir;
  const auto c = test::smallConfig(2);
  auto a = randomTrainer(c, 3);
  writeVersion1(dir.file("old.ckpt"), *a, test::checkpointMeta(4, "lns", experiment::toJson(c), 9));
  auto b = randomTrainer(c, 4);
  const auto meta =
      train::loadCheckpoint(dir.file("old.ckpt"), b->model(), &b->optimizer(), torch::kCPU);
  EXPECT_EQ(meta.step, 4);
  EXPECT_EQ(meta.runId, 9);
  expectEqual(everything(*a), everything(*b));
  EXPECT_EQ(train::readCheckpointMeta(dir.file("old.ckpt")).step, 4);
  // ... and saved again, in the new format, it is the same state
  train::saveCheckpoint(dir.file("new.ckpt"), b->model(), &b->optimizer(), meta);
  auto d = randomTrainer(c, 5);
  train::loadCheckpoint(dir.file("new.ckpt"), d->model(), &d->optimizer(), torch::kCPU);
  expectEqual(everything(*a), everything(*d));
}

TEST(CheckpointStream, AFullDiskLeavesEveryEarlierFileIntact) {
  test::TempDir dir;
  const auto c = test::smallConfig(3);
  auto a = randomTrainer(c, 6);
  const std::string first = dir.file("step-1.ckpt");
  train::saveCheckpoint(first, a->model(), &a->optimizer(), test::checkpointMeta(1, "lns", {}, 1));
  const std::string before = test::readFile(first);
  // A file-size limit makes write() fail with EFBIG part-way, as a full disk fails with ENOSPC.
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto previous = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = before.size() / 2;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string over, next;
  try {
    train::saveCheckpoint(first, a->model(), &a->optimizer(),
                          test::checkpointMeta(2, "lns", {}, 1));
  } catch (const train::CheckpointError& e) {
    over = e.what();
  }
  try {
    train::saveCheckpoint(dir.file("step-2.ckpt"), a->model(), &a->optimizer(),
                          test::checkpointMeta(2, "lns", {}, 1));
  } catch (const train::CheckpointError& e) {
    next = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, previous);
  EXPECT_NE(over.find("cannot write"), std::string::npos) << over;
  EXPECT_NE(next.find("step-2.ckpt.tmp"), std::string::npos) << next;
  EXPECT_EQ(test::readFile(first), before);  // the checkpoint it would have replaced
  EXPECT_FALSE(fs::exists(dir.file("step-2.ckpt")));
  EXPECT_FALSE(fs::exists(first + ".tmp"));
  EXPECT_FALSE(fs::exists(dir.file("step-2.ckpt.tmp")));
  EXPECT_NO_THROW(train::verifyCheckpoint(first, {}));
}

TEST(CheckpointStream, ATruncatedFileIsRefusedBeforeTheModelIsTouched) {
  test::TempDir dir;
  const auto c = test::smallConfig(2);
  auto a = randomTrainer(c, 7);
  train::saveCheckpoint(dir.file("ok"), a->model(), &a->optimizer(),
                        test::checkpointMeta(3, "lns", {}, 1));
  const std::string bytes = test::readFile(dir.file("ok"));
  test::writeFile(dir.file("cut"), bytes.substr(0, bytes.size() - 100));
  auto b = randomTrainer(c, 8);
  const auto untouched = everything(*b);
  try {
    train::loadCheckpoint(dir.file("cut"), b->model(), &b->optimizer(), torch::kCPU);
    ADD_FAILURE() << "a truncated file loaded";
  } catch (const train::CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
  expectEqual(untouched, everything(*b));
  // A flipped byte in the tensor data is found by the checksum, at the end of the one pass.
  std::string flipped = bytes;
  flipped[bytes.size() - 200] ^= 0x10;
  test::writeFile(dir.file("flipped"), flipped);
  try {
    train::loadCheckpoint(dir.file("flipped"), b->model(), &b->optimizer(), torch::kCPU);
    ADD_FAILURE() << "a corrupt file loaded";
  } catch (const train::CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("checksum"), std::string::npos) << e.what();
  }
  EXPECT_THROW(train::verifyCheckpoint(dir.file("flipped"), {}), train::CheckpointError);
  EXPECT_NO_THROW(train::checkCheckpointOwner(dir.file("flipped"), {}));  // header only
}

// Save and load of a 72M-parameter model (288 MB) with its AdamW state (576 MB more): the peak
// resident memory of both stays within 96 MiB of what the model and state take themselves.
TEST(CheckpointStream, AFewHundredMegabyteModelStaysWithinItsMemoryBound) {
  test::TempDir dir;
  auto c = test::smallConfig(4);
  c.model.vocabSize = 16000;
  c.model.dModel = 1024;
  c.model.nHeads = 16;
  c.model.dFF = 2048;
  auto t = std::make_unique<train::Trainer>(experiment::trainerConfig(c), "lns", torch::kCPU);
  train::createMissingOptimizerState(t->optimizer());
  int64_t params = 0;
  for (const auto& p : t->model()->parameters()) params += p.numel();
  EXPECT_GT(params, 60'000'000);
  if (!util::resetPeakResident()) GTEST_SKIP() << "this kernel cannot reset the peak (clear_refs)";
  const double base = util::residentMiB();
  train::saveCheckpoint(dir.file("big"), t->model(), &t->optimizer(),
                        test::checkpointMeta(1, "lns", {}, 1));
  const double afterSave = util::peakResidentMiB();
  train::loadCheckpoint(dir.file("big"), t->model(), &t->optimizer(), torch::kCPU);
  const double afterLoad = util::peakResidentMiB();
  const double fileMiB = static_cast<double>(fs::file_size(dir.file("big"))) / (1 << 20);
  std::printf(
      "model + AdamW state %.0f MiB in a %.0f MiB file: resident %.0f MiB, peak %.0f during "
      "save, %.0f during load\n",
      3.0 * params * 4 / (1 << 20), fileMiB, base, afterSave, afterLoad);
  EXPECT_GT(fileMiB, 800);
  EXPECT_LE(afterSave - base, 96);
  EXPECT_LE(afterLoad - base, 96);
}

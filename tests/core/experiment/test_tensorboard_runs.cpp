// TensorBoard out and in through the depthlab-tensorboard helper: a run's scalars and per-layer
// series written as event files and read back as a run hold the same values; a corrupt record
// is refused by its checksum (nothing written), a file cut short keeps the records before it;
// the usual tag names map to the lab's keys.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "experiment/run_config.h"
#include "experiment/tensorboard_runs.h"
#include "store/metric_catalogue.h"
#include "support/error_of.h"
#include "support/temp_dir.h"

using namespace depthlab;
using test::errorOf;
namespace fs = std::filesystem;

namespace {

int64_t storedRun(store::RunStore& s) {
  store::NewRun run;
  run.name = "source run";
  run.scheme = "lns";
  run.configJson = "{}";
  const int64_t id = s.createRun(run);
  store::WriteBatch b;
  for (int step = 0; step < 5; ++step) {
    b.scalar(step, metrics::kLossTrain, 4.0 - 0.25 * step);
    b.scalar(step, metrics::kLr, 1e-3 * (step + 1));
  }
  b.scalar(4, metrics::kLossVal, 3.5);
  b.layer(0, metrics::kVariance, {0.5f, 1.5f, 2.5f});
  b.layer(4, metrics::kVariance, {0.25f, NAN, 3.75f});
  s.write(id, b);
  return id;
}

/// Exports `run` to dir/tb; skips the test where the helper is not built (no protobuf).
std::string exportOrSkip(store::RunStore& s, int64_t run, const test::TempDir& dir) {
  try {
    const auto r = experiment::exportToTensorBoard(s, {run}, dir.file("tb"));
    EXPECT_EQ(r.files.size(), 1u);
    EXPECT_EQ(r.values, 5u * 2 + 1 + 6);
    return r.files.front();
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()).find("depthlab-tensorboard helper") != std::string::npos) return "";
    throw;
  }
}

}  // namespace

TEST(TensorBoardRuns, WrittenAndReadBackARunHoldsTheSameValues) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("lab.db"));
  const auto file = exportOrSkip(s, storedRun(s), dir);
  if (file.empty()) GTEST_SKIP() << "depthlab-tensorboard is not built (no protobuf)";
  EXPECT_NE(file.find("events.out.tfevents."), std::string::npos);
  const auto imported = experiment::importTensorBoard(s, dir.file("tb"), "", "lns");
  ASSERT_EQ(imported.size(), 1u);
  const auto id = imported[0].runId;
  const auto run = *s.run(id);
  EXPECT_TRUE(experiment::isTensorBoardRun(run));
  EXPECT_NE(experiment::notTrainableReason(run), "");
  EXPECT_EQ(run.scheme, "lns");
  const auto loss = s.scalarSeries(id, metrics::kLossTrain);
  ASSERT_EQ(loss.size(), 5u);
  EXPECT_DOUBLE_EQ(loss[3].value, 3.25);  // float32 in the file: these are exact
  EXPECT_EQ(s.scalarSeries(id, metrics::kLossVal).back().step, 4);
  const auto v = s.layerSeries(id, metrics::kVariance);
  ASSERT_EQ(v.steps, (std::vector<int64_t>{0, 4}));
  ASSERT_EQ(v.nLayers, 3);
  EXPECT_FLOAT_EQ(v.values[0], 0.5f);
  EXPECT_FLOAT_EQ(v.values[5], 3.75f);
  EXPECT_TRUE(std::isnan(v.values[4]));  // a NaN stays a NaN
}

TEST(TensorBoardRuns, ACorruptRecordIsRefusedAndACutShortFileKeepsItsRecords) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("lab.db"));
  const auto file = exportOrSkip(s, storedRun(s), dir);
  if (file.empty()) GTEST_SKIP() << "depthlab-tensorboard is not built (no protobuf)";
  const auto size = fs::file_size(file);
  fs::copy_file(file, dir.file("whole"));
  {  // one byte in the middle of a record's data
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    f.put('\x7f');
  }
  const auto runsBefore = s.listRuns().size();
  const auto why =
      errorOf([&] { experiment::importTensorBoard(s, dir.file("tb"), "x", "pre_ln"); });
  EXPECT_NE(why.find("is corrupt at record"), std::string::npos) << why;
  EXPECT_NE(why.find("checksum"), std::string::npos) << why;
  EXPECT_EQ(s.listRuns().size(), runsBefore);
  fs::remove(file);
  fs::copy_file(dir.file("whole"), file);
  fs::resize_file(file, size - 7);  // a writer still writing its last record
  const auto r = experiment::importTensorBoard(s, dir.file("tb"), "cut", "pre_ln");
  ASSERT_EQ(r.size(), 1u);
  ASSERT_EQ(r[0].warnings.size(), 1u);
  EXPECT_NE(r[0].warnings[0].find("cut short"), std::string::npos);
  EXPECT_EQ(s.scalarSeries(r[0].runId, metrics::kLossTrain).size(), 5u);
}

TEST(TensorBoardRuns, UsualTagNamesMapToTheLabsKeys) {
  EXPECT_EQ(experiment::scalarKeyOfTag("train/loss"), metrics::kLossTrain);
  EXPECT_EQ(experiment::scalarKeyOfTag("Loss/train"), metrics::kLossTrain);
  EXPECT_EQ(experiment::scalarKeyOfTag("eval/loss"), metrics::kLossVal);
  EXPECT_EQ(experiment::scalarKeyOfTag("val_loss"), metrics::kLossVal);
  EXPECT_EQ(experiment::scalarKeyOfTag("train/learning_rate"), metrics::kLr);
  EXPECT_EQ(experiment::scalarKeyOfTag("loss_train"), metrics::kLossTrain);  // the lab's export
  EXPECT_EQ(experiment::scalarKeyOfTag("accuracy"), "");
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("lab.db"));
  fs::create_directories(dir.file("empty/sub"));
  const auto why =
      errorOf([&] { experiment::importTensorBoard(s, dir.file("empty"), "", "pre_ln"); });
  EXPECT_NE(why.find("holds no TensorBoard event file"), std::string::npos) << why;
}

TEST(TensorBoardRuns, FiguresGoInAsImagesAndWhatIsNoPngIsRefused) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("lab.db"));
  const int64_t run = storedRun(s);
  if (exportOrSkip(s, run, dir).empty()) GTEST_SKIP() << "depthlab-tensorboard is not built";
  // A 1x1 RGBA PNG.
  static const char kPng[] =
      "\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52\x00\x00\x00\x01\x00\x00"
      "\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\x0d\x49\x44\x41\x54\x78\xda\x63"
      "\x64\x60\xf8\x5f\x0f\x00\x02\x87\x01\x80\xeb\x47\xba\x92\x00\x00\x00\x00\x49\x45\x4e\x44"
      "\xae\x42\x60\x82";
  std::ofstream(dir.file("dot.png"), std::ios::binary).write(kPng, sizeof(kPng) - 1);
  const auto r = experiment::exportToTensorBoard(s, {run}, dir.file("figs"),
                                                 {{run, "figures/dot", 4, dir.file("dot.png")}});
  EXPECT_EQ(r.images, 1u);
  EXPECT_GT(fs::file_size(r.files.front()), sizeof(kPng));
  std::ofstream(dir.file("not.png")) << "plain text";
  const auto why = errorOf([&] {
    experiment::exportToTensorBoard(s, {run}, dir.file("bad"),
                                    {{run, "x", 0, dir.file("not.png")}});
  });
  EXPECT_NE(why.find("is not a PNG image"), std::string::npos) << why;
}

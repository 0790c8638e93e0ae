// Finding a series' checkpoints and each one's step: from the names training scripts and hubs
// give them, from Trainer's trainer_state.json, from the lab's own export-hf record; two
// checkpoints of one step and a folder of no step are refused with what to do.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "hf/checkpoint_series.h"
#include "hf/hf_config.h"
#include "support/error_of.h"
#include "support/temp_dir.h"

using namespace depthlab;
using test::errorOf;
namespace fs = std::filesystem;

namespace {

std::string checkpoint(const test::TempDir& dir, const std::string& name,
                       const std::string& config = "{}") {
  const auto path = dir.file(name);
  fs::create_directories(path);
  std::ofstream(path + "/config.json") << config;
  return path;
}

}  // namespace

TEST(CheckpointSeries, StepsAndTokensFromTheNamesHubsAndTrainersGive) {
  const auto step = [](const std::string& n) { return hf::stepFromName(n).value().step; };
  EXPECT_EQ(step("step143000"), 143000);              // Pythia's revisions
  EXPECT_EQ(step("checkpoint-500"), 500);             // Trainer
  EXPECT_EQ(step("stage1-step1000-tokens4B"), 1000);  // OLMo
  EXPECT_EQ(step("iter_0001000"), 1000);              // Megatron
  EXPECT_EQ(step("global_step20"), 20);               // DeepSpeed
  EXPECT_EQ(hf::stepFromName("stage1-step1000-tokens4B")->tokens, 4000000000LL);
  EXPECT_EQ(hf::stepFromName("step5-tokens4194304")->tokens, 4194304);
  EXPECT_EQ(hf::stepFromName("step5-tokens1.5T")->tokens, 1500000000000LL);
  EXPECT_FALSE(hf::stepFromName("step5")->tokens.has_value());
  EXPECT_FALSE(hf::stepFromName("final").has_value());
  EXPECT_FALSE(hf::stepFromName("stepping-stone").has_value());
  EXPECT_FALSE(hf::stepFromName("mystep12").has_value());  // a word ending in step is no step
}

TEST(CheckpointSeries, TrainerStateAndTheLabsExportTellTheStepOfAnUnnamedFolder) {
  test::TempDir dir;
  const auto trainer = checkpoint(dir, "a/final");
  std::ofstream(trainer + "/trainer_state.json")
      << R"({"global_step": 750, "num_input_tokens_seen": 96000})";
  const auto c = hf::describeCheckpoint(trainer);
  EXPECT_EQ(c.step, 750);
  EXPECT_EQ(c.tokens, 96000);
  EXPECT_EQ(c.stepFrom, "trainer_state.json");
  const auto exported = checkpoint(dir, "a/exported", R"({"depthlab": {"run_id": 3, "step": 40}})");
  EXPECT_EQ(hf::describeCheckpoint(exported).step, 40);
  const auto none = checkpoint(dir, "a/latest");
  const auto why = errorOf([&] { hf::describeCheckpoint(none); });
  EXPECT_NE(why.find("cannot tell the training step"), std::string::npos) << why;
  EXPECT_NE(why.find("stepN or checkpoint-N"), std::string::npos) << why;
}

TEST(CheckpointSeries, AFolderOfCheckpointsIsSortedByStepAndOtherFoldersPassedOver) {
  test::TempDir dir;
  checkpoint(dir, "run/checkpoint-1000");
  checkpoint(dir, "run/checkpoint-200");
  checkpoint(dir, "run/checkpoint-30");
  fs::create_directories(dir.file("run/runs"));  // TensorBoard's logs beside them
  const auto series = hf::findSeries({dir.file("run")});
  ASSERT_EQ(series.size(), 3u);
  EXPECT_EQ(series[0].step, 30);
  EXPECT_EQ(series[1].step, 200);
  EXPECT_EQ(series[2].step, 1000);
  EXPECT_TRUE(fs::path(series[0].dir).is_absolute());
  // The same folder given twice is one checkpoint.
  EXPECT_EQ(hf::findSeries({dir.file("run/checkpoint-30"), dir.file("run/checkpoint-30")}).size(),
            1u);
}

TEST(CheckpointSeries, TwoCheckpointsOfOneStepAreRefusedNamingBoth) {
  test::TempDir dir;
  checkpoint(dir, "a/step100");
  checkpoint(dir, "b/checkpoint-100");
  const auto why = errorOf([&] { hf::findSeries({dir.file("a"), dir.file("b")}); });
  EXPECT_NE(why.find("two checkpoints of step 100"), std::string::npos) << why;
  EXPECT_NE(why.find("a/step100"), std::string::npos) << why;
  EXPECT_NE(why.find("b/checkpoint-100"), std::string::npos) << why;
  fs::create_directories(dir.file("empty"));
  EXPECT_NE(errorOf([&] { hf::findSeries({dir.file("empty")}); }).find("holds no checkpoint"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { hf::findSeries({dir.file("nowhere")}); }).find("is not a folder"),
            std::string::npos);
}

// `train --preset P --config FILE` through the real depthlab-cli: a partial config file changes
// only what it names and takes everything else from the preset (it had replaced the preset
// with the built-in defaults: --preset tiny --config {"model": {"nLayers": 6}} trained d=64).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/temp_dir.h"

using namespace depthlab;

TEST(TrainConfig, APartialConfigFileLayersOntoThePresetGiven) {
  test::TempDir dir;
  const std::string cli = std::string(DEPTHLAB_CLI_PATH) + " --db " + dir.file("runs.db");
  std::string text;
  for (int i = 0; text.size() < 20000; ++i) text += "the curse of depth " + std::to_string(i % 31) + "\n";
  test::writeFile(dir.file("text.txt"), text);
  test::writeFile(dir.file("part.json"), R"({"model": {"nLayers": 6}})");
  std::string out;
  ASSERT_EQ(test::runCommand(cli + " train --preset tiny --config " + dir.file("part.json") +
                                 " --scheme pre_ln --steps 2 --corpus " + dir.file("text.txt") + " --quiet 2>&1",
                             &out), 0) << out;
  ASSERT_EQ(test::runCommand(cli + " --json runs show 1 2>/dev/null", &out), 0) << out;
  const auto run = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(run.is_discarded()) << out;
  const auto& config = run["config"];
  EXPECT_EQ(config["model"]["nLayers"], 6);
  EXPECT_EQ(config["model"]["dModel"], 32);  // tiny's width, not the defaults' 64
  EXPECT_EQ(config["preset"], "tiny");
  EXPECT_EQ(run["group"].get<std::string>().rfind("tiny-", 0), 0u) << run["group"];
}

// `train --preset P --config FILE` through the real depthlab-cli: a partial config file changes
// only what it names and takes everything else from the preset (it had replaced the preset
// with the built-in defaults: --preset tiny --config {"model": {"nLayers": 6}} trained d=64).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/build_paths.h"
#include "support/temp_dir.h"

using namespace depthlab;

TEST(TrainConfig, APartialConfigFileLayersOntoThePresetGiven) {
  test::TempDir dir;
  const std::string cli = depthlab::test::cliPath() + " --db " + dir.file("runs.db");
  std::string text;
  for (int i = 0; text.size() < 20000; ++i)
    text += "the curse of depth " + std::to_string(i % 31) + "\n";
  test::writeFile(dir.file("text.txt"), text);
  test::writeFile(dir.file("part.json"), R"({"model": {"nLayers": 6}})");
  std::string out;
  ASSERT_EQ(test::runCommand(cli + " train --preset tiny --config " + dir.file("part.json") +
                                 " --scheme pre_ln --steps 2 --corpus " + dir.file("text.txt") +
                                 " --quiet 2>&1",
                             &out),
            0)
      << out;
  ASSERT_EQ(test::runCommand(cli + " --json runs show 1 2>/dev/null", &out), 0) << out;
  const auto run = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(run.is_discarded()) << out;
  const auto& config = run["config"];
  EXPECT_EQ(config["model"]["nLayers"], 6);
  EXPECT_EQ(config["model"]["dModel"], 32);  // tiny's width, not the defaults' 64
  EXPECT_EQ(config["preset"], "tiny");
  EXPECT_EQ(run["group"].get<std::string>(), "tiny") << run["group"];  // the preset, as docs say
}

// `train --set section.key=value` sets any field of the config table, after the other flags,
// with the table's checks; a flag that sets a field is checked by the same table.
TEST(TrainConfig, SetChangesAnyFieldWithTheTablesChecks) {
  test::TempDir dir;
  const std::string cli = depthlab::test::cliPath() + " --db " + dir.file("runs.db");
  std::string text;
  for (int i = 0; text.size() < 20000; ++i)
    text += "the curse of depth " + std::to_string(i % 31) + "\n";
  test::writeFile(dir.file("text.txt"), text);
  const std::string train = cli +
                            " train --preset tiny --scheme pre_ln --steps 2 --quiet --corpus " +
                            dir.file("text.txt");
  std::string out;
  ASSERT_EQ(
      test::runCommand(train + " --set optim.lr=0.0021 --set model.nLayers=3 --set "
                               "run.bf16=false --set optim.steps=3 --set model.nLayers=3 2>&1",
                       &out),
      0)
      << out;
  ASSERT_EQ(test::runCommand(cli + " --json runs show 1 2>/dev/null", &out), 0) << out;
  const auto config = nlohmann::json::parse(out, nullptr, false)["config"];
  EXPECT_DOUBLE_EQ(config["optim"]["lr"].get<double>(), 0.0021);
  EXPECT_EQ(config["model"]["nLayers"], 3);
  EXPECT_EQ(config["optim"]["steps"], 3);  // --set comes after --steps 2
  const std::vector<std::pair<std::string, std::string>> refused = {
      {" --set optim.lr=fast", "--set optim.lr: 'fast' is not a number"},
      {" --set model.nLayers=0", "--set model.nLayers: depth must be in [1, 10000]"},
      {" --set model.nLayers=2.5", "is not a whole number"},
      {" --set optim.learningRate=1", "no field 'optim.learningRate' (optim's: optim.optimizer"},
      {" --set lr=1", "--set lr: no field 'lr' (paths are section.key"},
      {" --set lr", "write section.key=value"},
      {" --threads -1", "--threads: must be >= 0 (0 = default) (got -1)"},
      {" --keep-checkpoints 0", "--keep-checkpoints: must be at least 1 (got 0)"},
      {" --set options.lnsPlacement=before_norm",
       "read by no scheme of the group (pre_ln); schemes "
       "that take it: lns"},
      {" --set options.dytAlphaAttn=1.5",
       "options.dytAlphaAttn: set, but read by no scheme of the "
       "group (pre_ln); schemes that read it: dyt, dyt_lns"}};
  for (const auto& [args, says] : refused) {
    EXPECT_NE(test::runCommand(train + args + " 2>&1", &out), 0) << args;
    EXPECT_NE(out.find(says), std::string::npos) << args << "\n" << out;
  }
  ASSERT_EQ(test::runCommand(cli + " --json runs list 2>/dev/null", &out), 0);
  EXPECT_EQ(nlohmann::json::parse(out).size(), 1u);  // nothing refused made a run
}

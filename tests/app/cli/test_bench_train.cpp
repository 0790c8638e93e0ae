// `bench train` times the PyTorch reference under Debian's torch and under the newest torch of
// the torch2 environment in the same run. A stand-in Python (a shell script) plays the newest
// torch here, so the test checks the plumbing, not the speed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "support/temp_dir.h"

using namespace depthlab;

TEST(BenchTrain, ReportsBothReferencesAndSaysWhyOneIsMissing) {
  test::TempDir dir;
  const std::string venv = dir.file("torch2-9.9.9");
  std::filesystem::create_directories(venv + "/bin");
  test::writeFile(venv + "/bin/python",
                  "#!/bin/sh\n"
                  "case \"$2\" in *torch.__version__*) echo 9.9.9; exit 0;; esac\n"
                  "echo '{\"tokens_per_s\": 1000.0, \"seconds\": 1.0}'\n");
  std::filesystem::permissions(venv + "/bin/python", std::filesystem::perms::owner_all);
  const std::string base = std::string(DEPTHLAB_CLI_PATH) + " bench train --preset tiny --steps 2 --json";
  std::string out;
  ASSERT_EQ(test::runCommand("DEPTHLAB_TORCH2_VENV=" + venv + " " + base + " 2>/dev/null", &out), 0) << out;
  auto j = nlohmann::json::parse(out.substr(out.find('{')));
  EXPECT_EQ(j.value("newest_torch_version", ""), "9.9.9");
  EXPECT_DOUBLE_EQ(j.value("newest_torch_tokens_per_s", 0.0), 1000.0);
  EXPECT_NEAR(j.value("newest_ratio", 0.0), j["cpp_tokens_per_s"].get<double>() / 1000.0, 1e-9);
  EXPECT_TRUE(j.contains("torch_tokens_per_s") || j.contains("torch_error"));  // Debian's, as before
  ASSERT_EQ(test::runCommand("DEPTHLAB_TORCH2_VENV=" + dir.file("none") + " " + base + " 2>/dev/null", &out), 0) << out;
  j = nlohmann::json::parse(out.substr(out.find('{')));
  EXPECT_FALSE(j.contains("newest_ratio"));
  EXPECT_NE(j.value("newest_torch_error", "").find("torch2"), std::string::npos) << j.dump();
}

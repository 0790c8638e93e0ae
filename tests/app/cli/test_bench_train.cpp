// `bench train` times the PyTorch reference under Debian's torch and under the newest torch of
// the torch2 environment in the same run. A stand-in Python (a shell script) plays the newest
// torch here, so the test checks the plumbing, not the speed; and which OpenBLAS kernels
// Debian's reference is given.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "support/build_paths.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

// A stand-in torch2 environment in `dir`: its python answers the version query with 9.9.9, the
// reference's `gemm` mode with 50 ms on a "stand-in BLAS", and runs `reference` (shell lines
// that print the reference's JSON) otherwise. Returns its path.
std::string standInVenv(test::TempDir& dir, const std::string& reference) {
  const std::string venv = dir.file("torch2-9.9.9");
  std::filesystem::create_directories(venv + "/bin");
  test::writeFile(venv + "/bin/python",
                  "#!/bin/sh\n"
                  "case \"$2\" in *torch.__version__*) echo 9.9.9; exit 0;; esac\n"
                  "case \"$2\" in gemm) echo '{\"gemm_ms\": 50.0, \"blas\": \"stand-in BLAS\"}'; "
                  "exit 0;; esac\n" +
                      reference);
  std::filesystem::permissions(venv + "/bin/python", std::filesystem::perms::owner_all);
  return venv;
}

// A stand-in torch2 environment whose reference answers its k-th call with replies[k - 1] (JSON),
// the last reply once they run out.
std::string perCallVenv(test::TempDir& dir, const std::vector<std::string>& replies) {
  for (size_t k = 0; k < replies.size(); ++k) {
    test::writeFile(dir.file("reply-" + std::to_string(k + 1) + ".json"), replies[k] + "\n");
  }
  const std::string calls = dir.file("calls"), last = std::to_string(replies.size());
  return standInVenv(dir, "n=$(cat " + calls + " 2>/dev/null || echo 0); n=$((n+1)); echo $n > " +
                              calls + "\n[ $n -gt " + last + " ] && n=" + last + "\ncat " +
                              dir.file("reply-$n.json") + "\n");
}

}  // namespace

TEST(BenchTrain, ReportsBothReferencesAndSaysWhyOneIsMissing) {
  test::TempDir dir;
  const std::string venv =
      standInVenv(dir, "echo '{\"tokens_per_s\": 1000.0, \"seconds\": 1.0}'\n");
  const std::string base =
      depthlab::test::cliPath() + " bench train --preset tiny --steps 2 --json";
  std::string out;
  ASSERT_EQ(test::runCommand("DEPTHLAB_TORCH2_VENV=" + venv + " " + base + " 2>/dev/null", &out), 0)
      << out;
  auto j = nlohmann::json::parse(out.substr(out.find('{')));
  EXPECT_EQ(j.value("newest_torch_version", ""), "9.9.9");
  EXPECT_DOUBLE_EQ(j.value("newest_torch_tokens_per_s", 0.0), 1000.0);
  EXPECT_NEAR(j.value("newest_ratio", 0.0), j["cpp_tokens_per_s"].get<double>() / 1000.0, 1e-9);
  EXPECT_TRUE(j.contains("torch_tokens_per_s") ||
              j.contains("torch_error"));            // Debian's, as before
  EXPECT_FALSE(j.contains("newest_torch_step_ms"));  // this stand-in gives no update times
  // The GEMMs of an update timed alone on each side's BLAS: the C++ side's own, the stand-in's
  // from its `gemm` mode, Debian's from the real reference script (when its torch is there).
  EXPECT_GT(j.value("cpp_gemm_ms", 0.0), 0.0);
  EXPECT_FALSE(j.value("cpp_blas", std::string()).empty());
  EXPECT_DOUBLE_EQ(j.value("newest_torch_gemm_ms", 0.0), 50.0);
  EXPECT_EQ(j.value("newest_torch_blas", std::string()), "stand-in BLAS");
  if (j.contains("torch_tokens_per_s")) {
    EXPECT_GT(j.value("torch_gemm_ms", 0.0), 0.0) << j.dump();
    EXPECT_FALSE(j.value("torch_blas", std::string()).empty());
  }
  // Only a build without OpenBLAS of its own (torch2) chooses kernels for Debian's reference (the
  // Debian build chose for itself and its children when it started), and only a better core.
  const auto referenceCore = j.value("reference_openblas_coretype", std::string("?"));
  if (!j.value("openblas_kernels", std::string()).empty()) {
    EXPECT_EQ(referenceCore, "");
  }
  EXPECT_TRUE(referenceCore.empty() || referenceCore == "SkylakeX" || referenceCore == "Haswell")
      << referenceCore;
  ASSERT_EQ(test::runCommand(
                "DEPTHLAB_TORCH2_VENV=" + dir.file("none") + " " + base + " 2>/dev/null", &out),
            0)
      << out;
  j = nlohmann::json::parse(out.substr(out.find('{')));
  EXPECT_FALSE(j.contains("newest_ratio"));
  EXPECT_NE(j.value("newest_torch_error", "").find("torch2"), std::string::npos) << j.dump();
}

TEST(BenchTrain, RoundsReportTheMedianOfEachRoundsRatio) {
  test::TempDir dir;
  // The stand-in reference gets slower every round (1000, 500, 250 tokens/s): every round has
  // its own ratio, and the one reported must be their median, each from its own round's C++.
  const std::string venv = perCallVenv(dir, {R"({"tokens_per_s": 1000.0, "seconds": 1.0})",
                                             R"({"tokens_per_s": 500.0, "seconds": 1.0})",
                                             R"({"tokens_per_s": 250.0, "seconds": 1.0})"});
  std::string out;
  ASSERT_EQ(
      test::runCommand("DEPTHLAB_TORCH2_VENV=" + venv + " " + depthlab::test::cliPath() +
                           " bench train --preset tiny --steps 2 --rounds 3 --json 2>/dev/null",
                       &out),
      0)
      << out;
  auto j = nlohmann::json::parse(out.substr(out.find('{')));
  EXPECT_EQ(j.value("rounds", 0), 3);
  ASSERT_EQ(j["each_round"].size(), 3u);
  std::vector<double> cpp, ratios;
  const double reference[3] = {1000.0, 500.0, 250.0};
  for (int i = 0; i < 3; ++i) {
    const auto& r = j["each_round"][i];
    EXPECT_DOUBLE_EQ(r.value("newest_torch_tokens_per_s", 0.0), reference[i]);
    cpp.push_back(r["cpp_tokens_per_s"].get<double>());
    ratios.push_back(cpp.back() / reference[i]);
  }
  std::sort(cpp.begin(), cpp.end());
  std::sort(ratios.begin(), ratios.end());
  EXPECT_DOUBLE_EQ(j["cpp_tokens_per_s"].get<double>(), cpp[1]);
  EXPECT_DOUBLE_EQ(j["newest_torch_tokens_per_s"].get<double>(), 500.0);
  EXPECT_NEAR(j["newest_ratio"].get<double>(), ratios[1], 1e-9);
  EXPECT_EQ(j["cpp_step_ms"]["each"].size(), 6u);  // every round's timed updates
}

TEST(BenchTrain, ComparesTheFastestUpdatesOfBothSides) {
  test::TempDir dir;
  // Two rounds of a stand-in reference that times its updates: 400, 300, 500 ms, then 350,
  // 900 ms. Its fastest update (300 ms) over the C++ side's fastest is the noise-free ratio.
  const std::string venv = perCallVenv(
      dir, {R"({"tokens_per_s": 100.0, "seconds": 1.0, "step_ms": [400.0, 300.0, 500.0]})",
            R"({"tokens_per_s": 100.0, "seconds": 1.0, "step_ms": [350.0, 900.0]})"});
  std::string out;
  ASSERT_EQ(
      test::runCommand("DEPTHLAB_TORCH2_VENV=" + venv + " " + depthlab::test::cliPath() +
                           " bench train --preset tiny --steps 2 --rounds 2 --json 2>/dev/null",
                       &out),
      0)
      << out;
  auto j = nlohmann::json::parse(out.substr(out.find('{')));
  ASSERT_TRUE(j.contains("newest_torch_step_ms")) << j.dump();
  EXPECT_DOUBLE_EQ(j["newest_torch_step_ms"]["min"].get<double>(), 300.0);
  EXPECT_DOUBLE_EQ(j["newest_torch_step_ms"]["median"].get<double>(), 400.0);
  EXPECT_DOUBLE_EQ(j["newest_torch_step_ms"]["max"].get<double>(), 900.0);
  const double cppFastest = j["cpp_step_ms"]["min"].get<double>();
  ASSERT_GT(cppFastest, 0.0);
  EXPECT_NEAR(j["newest_fastest_update_ratio"].get<double>(), 300.0 / cppFastest, 1e-9);
  // the text report prints the same comparison
  ASSERT_EQ(test::runCommand("DEPTHLAB_TORCH2_VENV=" + venv + " " + depthlab::test::cliPath() +
                                 " bench train --preset tiny --steps 2 2>/dev/null",
                             &out),
            0)
      << out;
  EXPECT_NE(out.find("fastest updates: C++"), std::string::npos) << out;
  EXPECT_NE(out.find("50.0 ms on stand-in BLAS"), std::string::npos) << out;
}

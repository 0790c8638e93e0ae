// OpenBLAS's kernels on CPUs newer than it (util/openblas_kernels.h): which fallback cores are
// replaced by what, that a choice the user made stands, and that depthlab-cli, started without
// OPENBLAS_CORETYPE, runs the kernels this CPU deserves.
#include <gtest/gtest.h>

#include <string>

#include "support/build_paths.h"
#include "support/temp_dir.h"
#include "util/openblas_kernels.h"

using namespace depthlab::util;

TEST(OpenBlasKernels, OnlyPreAvx2FallbacksAreReplaced) {
  const CpuVectorFeatures avx512{true, true, true}, avx2{true, true, false},
      old{false, false, false};
  EXPECT_EQ(betterOpenBlasCore("Prescott", avx512), "SkylakeX");  // Emerald Rapids, measured
  EXPECT_EQ(betterOpenBlasCore("prescott", avx2), "Haswell");
  EXPECT_EQ(betterOpenBlasCore("Sandybridge", avx512), "SkylakeX");  // AVX without FMA kernels
  EXPECT_EQ(betterOpenBlasCore("Nehalem", avx2), "Haswell");
  EXPECT_EQ(betterOpenBlasCore("Prescott", old), "");  // nothing better to run
  for (const char* good : {"Haswell", "SkylakeX", "Cooperlake", "Zen", "SapphireRapids"}) {
    EXPECT_EQ(betterOpenBlasCore(good, avx512), "") << good;  // a known core stands
  }
  EXPECT_EQ(betterOpenBlasCore("", avx512), "");  // no OpenBLAS in the process
}

TEST(OpenBlasKernels, TheCliRunsTheKernelsThisCpuDeserves) {
  const std::string here = openBlasCore();
  if (here.empty()) GTEST_SKIP() << "LibTorch here does not use OpenBLAS (pip's torch: MKL)";
  // `bench train --steps 1 --cpp-only --json` reports the kernels the CLI ran with.
  const std::string cli =
      depthlab::test::cliPath() + " bench train --preset tiny --steps 1 --cpp-only --json";
  std::string fresh, chosen;
  ASSERT_EQ(depthlab::test::runCommand("env -u OPENBLAS_CORETYPE " + cli, &fresh), 0) << fresh;
  const auto at = fresh.find("\"openblas_kernels\": \"");
  ASSERT_NE(at, std::string::npos) << fresh;
  const std::string core = fresh.substr(at + 21, fresh.find('"', at + 21) - at - 21);
  EXPECT_EQ(betterOpenBlasCore(core, cpuVectorFeatures()), "")
      << "still on fallback kernels: " << core;
  // A core the user chose stands.
  ASSERT_EQ(depthlab::test::runCommand("env OPENBLAS_CORETYPE=Prescott " + cli, &chosen), 0)
      << chosen;
  EXPECT_NE(chosen.find("\"openblas_kernels\": \"prescott\""), std::string::npos) << chosen;
}

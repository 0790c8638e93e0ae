// `bench probes` reports the probes' share of training time, and apart from it the final
// probes after the last update (they cost the same whatever the run's length). Checks the
// plumbing and the arithmetic on the tiny preset, not the speed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "support/build_paths.h"
#include "support/temp_dir.h"

using namespace depthlab;

TEST(BenchProbes, ReportsTheFinalProbesApartFromThoseDuringTraining) {
  std::string out;
  const std::string cli = depthlab::test::cliPath() + " bench probes --preset tiny";
  ASSERT_EQ(test::runCommand(cli + " --json 2>/dev/null", &out), 0) << out;
  const auto j = nlohmann::json::parse(out.substr(out.find('{')));
  const double all = j.at("scheduled_seconds").get<double>();
  const double final = j.at("final_inline_seconds").get<double>();
  // The final probes include the end-of-run block sweep, which no step during training runs.
  EXPECT_GT(final, 0.0);
  EXPECT_LT(final, all);
  EXPECT_TRUE(j.at("replayed").get<bool>());
  // The text splits the same total in two.
  ASSERT_EQ(test::runCommand(cli + " 2>/dev/null", &out), 0) << out;
  EXPECT_NE(out.find("of which during training"), std::string::npos) << out;
  EXPECT_NE(out.find("the final probes after the last update"), std::string::npos) << out;
}

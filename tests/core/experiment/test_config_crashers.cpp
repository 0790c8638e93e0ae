// Every input the config fuzzer ever crashed on (tests/fuzz/crashers/config-*), replayed: each
// must now be a config or a ConfigError. And the case it found, by hand: a float far outside an
// integer field's range is refused by name instead of being cast.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "experiment/experiment_config.h"
#include "experiment/presets.h"
#include "experiment/resource_estimate.h"
#include "support/build_paths.h"
#include "support/temp_dir.h"

using namespace depthlab;
namespace fs = std::filesystem;

TEST(ConfigCrashers, EveryKnownCrasherIsAConfigOrAClearError) {
  int replayed = 0;
  for (const auto& e :
       fs::directory_iterator(fs::path(depthlab::test::sourceDir()) / "tests/fuzz/crashers")) {
    if (e.path().filename().string().rfind("config-", 0) != 0) continue;
    SCOPED_TRACE(e.path().filename().string());
    auto j = nlohmann::json::parse(test::readFile(e.path().string()), nullptr, false);
    if (j.is_discarded()) continue;
    try {
      experiment::requireValid(experiment::configFromJson(j));
    } catch (const experiment::ConfigError&) {}
    ++replayed;
  }
  std::printf("replayed %d config crasher(s)\n", replayed);
}

TEST(ConfigCrashers, IntegerFieldsTakeWholeNumbersInRangeOnly) {
  for (const char* bad : {R"({"model": {"dModel": 6.00778e+76}})", R"({"model": {"nLayers": 2.5}})",
                          R"({"optim": {"steps": 1e300}})", R"({"model": {"nHeads": "4"}})",
                          R"({"run": {"seed": 18446744073709551615}})"}) {
    SCOPED_TRACE(bad);
    try {
      experiment::configFromJson(nlohmann::json::parse(bad));
      ADD_FAILURE() << "accepted";
    } catch (const experiment::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("config: '"), std::string::npos) << e.what();
    }
  }
  auto ok = experiment::configFromJson(nlohmann::json::parse(R"({"model": {"dModel": 128.0}})"));
  EXPECT_EQ(ok.model.dModel, 128);
}

TEST(ConfigCrashers, AModelTooBigToCountIsRefusedBeforeAnythingIsAllocated) {
  // The issue's config: 10^9 wide. Its parameter count once wrapped round to a negative
  // number, so the memory check passed and LibTorch allocated gigabytes before failing.
  const auto c =
      experiment::configFromJson(nlohmann::json::parse(R"({"model": {"dModel": 1000000000}})"));
  EXPECT_EQ(experiment::parameterCount(c.model, "pre_ln", c.options),
            experiment::kParameterCountOverflow);
  try {
    experiment::requireValid(c);
    ADD_FAILURE() << "a 10^9-wide model passed validation";
  } catch (const experiment::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("more parameters than can be counted"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(experiment::requireFits(c, 64000, "this machine"), experiment::ConfigError);
  // Activations are checked too: a sequence whose attention scores cannot be counted.
  const auto t = experiment::configFromJson(
      nlohmann::json::parse(R"({"model": {"seqLen": 2000000000}, "optim": {"batchSize": 1000}})"));
  const auto issues = experiment::validate(t);
  EXPECT_TRUE(std::any_of(issues.begin(), issues.end(),
                          [](const auto& i) { return i.field == "model.seqLen"; }));
  // An ordinary model is untouched.
  EXPECT_TRUE(
      experiment::validate(experiment::configFromJson(nlohmann::json::parse("{}"))).empty());
}

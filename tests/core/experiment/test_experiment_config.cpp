// Config JSON round trip, validation messages that name the field, presets and their sizes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "experiment/presets.h"
#include "experiment/run_config.h"
#include "support/temp_dir.h"

using namespace depthlab::experiment;

namespace {
std::string firstIssue(const ExperimentConfig& c) {
  auto issues = validate(c);
  return issues.empty() ? "" : issues.front().message;
}
}  // namespace

TEST(ExperimentConfig, JsonRoundTrip) {
  auto c = *presetConfig("cpu-demo");
  c.schemes = {"mix_ln", "deepnorm"};
  c.options.layerScale = true;
  c.optim.gradAccum = 3;
  c.run.seed = 99;
  auto back = configFromJson(toJson(c));
  EXPECT_EQ(toJson(back), toJson(c));
  depthlab::test::TempDir dir;
  saveConfigFile(c, dir.file("c.json"));
  EXPECT_EQ(toJson(loadConfigFile(dir.file("c.json"))), toJson(c));
}

TEST(ExperimentConfig, MissingKeysKeepDefaults) {
  auto c = configFromJson(nlohmann::json::parse(R"({"model": {"nLayers": 7}})"));
  EXPECT_EQ(c.model.nLayers, 7);
  EXPECT_EQ(c.model.dModel, ExperimentConfig{}.model.dModel);
}

TEST(ExperimentConfig, UnknownKeysAndWrongTypesAreNamed) {
  try {
    configFromJson(nlohmann::json::parse(R"({"model": {"nLayerz": 7}})"));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model.nLayerz"), std::string::npos) << e.what();
  }
  try {
    configFromJson(nlohmann::json::parse(R"({"optim": {"lr": "fast"}})"));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("optim.lr"), std::string::npos) << e.what();
  }
  depthlab::test::TempDir dir;
  depthlab::test::writeFile(dir.file("broken.json"), "{ not json");
  EXPECT_THROW(loadConfigFile(dir.file("broken.json")), ConfigError);
  EXPECT_THROW(loadConfigFile(dir.file("absent.json")), ConfigError);
}

TEST(ExperimentConfig, ValidationNamesTheField) {
  ExperimentConfig c;
  EXPECT_TRUE(validate(c).empty());
  c.model.nHeads = 3;  // 64 % 3 != 0
  EXPECT_NE(firstIssue(c).find("model.nHeads"), std::string::npos);
  EXPECT_NE(firstIssue(c).find("do not divide width 64"), std::string::npos);
  c = {};
  c.model.nLayers = 0;
  EXPECT_NE(firstIssue(c).find("model.nLayers"), std::string::npos);
  c = {};
  c.optim.lr = 0;
  EXPECT_NE(firstIssue(c).find("optim.lr"), std::string::npos);
  c = {};
  c.optim.lr = -1e-3;
  EXPECT_NE(firstIssue(c).find("optim.lr"), std::string::npos);
  c = {};
  c.schemes = {"pre_ln", "layernorm_scaling"};
  auto msg = firstIssue(c);
  EXPECT_NE(msg.find("unknown scheme 'layernorm_scaling'"), std::string::npos) << msg;
  for (const auto& known : kSchemes) EXPECT_NE(msg.find(known), std::string::npos) << known;
  c = {};
  c.optim.warmupSteps = c.optim.steps;
  EXPECT_NE(firstIssue(c).find("optim.warmupSteps"), std::string::npos);
  c = {};
  c.run.device = "tpu";
  EXPECT_NE(firstIssue(c).find("run.device"), std::string::npos);
  c = {};
  c.options.lnsPlacement = "sideways";
  EXPECT_NE(firstIssue(c).find("options.lnsPlacement"), std::string::npos);
  c = {};
  c.data.tokenizer = "bpe";
  EXPECT_NE(firstIssue(c).find("data.tokenizer"), std::string::npos);
  EXPECT_THROW(requireValid(c), ConfigError);
}

TEST(Presets, PaperConfigsMatchTheFactsFile) {
  // Facts file section 3.2 (our parameter formula, untied embeddings, vocab 32000).
  const std::map<std::string, double> millions = {{"llama-71m", 70.6}, {"llama-130m", 134.1},
                                                  {"llama-250m", 247.4}, {"llama-350m", 368.0},
                                                  {"llama-1b", 1339.1}};
  for (const auto& [name, m] : millions) {
    auto c = presetConfig(name);
    ASSERT_TRUE(c) << name;
    EXPECT_NEAR(parameterCount(c->model) / 1e6, m, 0.05) << name;
    EXPECT_EQ(c->model.seqLen, 256);
    EXPECT_EQ(c->optim.batchSize * c->optim.gradAccum, name == "llama-71m" ? 256 : 512) << name;
    EXPECT_TRUE(validate(*c).empty()) << name;
  }
  auto c130 = *presetConfig("llama-130m");
  EXPECT_EQ(c130.model.dModel, 768);
  EXPECT_EQ(c130.model.nLayers, 12);
  EXPECT_EQ(c130.model.nHeads, 12);
  EXPECT_EQ(c130.model.dFF, 2048);
  EXPECT_DOUBLE_EQ(c130.optim.lr, 1e-3);
  EXPECT_EQ(c130.optim.steps, 20000);
  EXPECT_EQ(c130.optim.warmupSteps, 2000);
  auto c1b = *presetConfig("llama-1b");
  EXPECT_DOUBLE_EQ(c1b.optim.lr, 5e-4);
  EXPECT_EQ(c1b.optim.steps, 100000);
  EXPECT_EQ(c1b.optim.warmupSteps, 1000);
  EXPECT_EQ((*presetConfig("llama-250m")).optim.steps, 40000);
  EXPECT_EQ((*presetConfig("llama-350m")).optim.warmupSteps, 6000);
}

TEST(Presets, CpuPresetsAreValidAndDefaultToPreLnPlusLns) {
  for (const char* name : {"tiny", "cpu-demo", "cpu-long"}) {
    auto c = presetConfig(name);
    ASSERT_TRUE(c) << name;
    EXPECT_TRUE(validate(*c).empty()) << name;
    EXPECT_EQ(c->schemes, (std::vector<std::string>{"pre_ln", "lns"}));
  }
  EXPECT_FALSE(presetConfig("llama-9000b"));
}

TEST(Presets, ParameterCountMatchesTheModel) {
  // Sanity: extras per scheme are counted.
  ModelConfig m;
  EXPECT_GT(parameterCount(m, "sandwich"), parameterCount(m, "pre_ln"));
  SchemeOptions o;
  o.layerScale = true;
  EXPECT_EQ(parameterCount(m, "pre_ln", o) - parameterCount(m, "pre_ln"),
            2LL * m.nLayers * m.dModel);
}

TEST(ExperimentConfig, APartialConfigFileChangesOnlyWhatItNamesOverThePreset) {
  depthlab::test::TempDir dir;
  depthlab::test::writeFile(dir.file("part.json"),
                            R"({"model": {"nLayers": 6}, "optim": {"lr": 0.01}})");
  const auto tiny = *presetConfig("tiny");
  // Over an explicit preset: its values, the file's two keys.
  auto c = loadConfigOverPreset(dir.file("part.json"), "tiny");
  EXPECT_EQ(c.model.nLayers, 6);
  EXPECT_DOUBLE_EQ(c.optim.lr, 0.01);
  EXPECT_EQ(c.model.dModel, tiny.model.dModel);
  EXPECT_EQ(c.optim.steps, tiny.optim.steps);
  EXPECT_EQ(c.preset, "tiny");
  // The preset the file names, when none is given; the explicit one wins over it.
  depthlab::test::writeFile(dir.file("named.json"),
                            R"({"preset": "cpu-demo", "model": {"nLayers": 6}})");
  EXPECT_EQ(loadConfigOverPreset(dir.file("named.json")).model.dModel,
            presetConfig("cpu-demo")->model.dModel);
  EXPECT_EQ(loadConfigOverPreset(dir.file("named.json"), "tiny").model.dModel, tiny.model.dModel);
  // No preset anywhere: the defaults, as loadConfigFile. A preset the file names that is not
  // known is refused (it had trained on the built-in defaults without a word).
  depthlab::test::writeFile(dir.file("custom.json"),
                            R"({"preset": "mine", "model": {"nLayers": 6}})");
  EXPECT_THROW(loadConfigOverPreset(dir.file("custom.json")), ConfigError);
  EXPECT_EQ(toJson(loadConfigOverPreset(dir.file("part.json"))),
            toJson(loadConfigFile(dir.file("part.json"))));
  // A complete file (what Save writes) loads the same over any preset.
  auto full = *presetConfig("cpu-demo");
  full.model.nLayers = 9;
  saveConfigFile(full, dir.file("full.json"));
  EXPECT_EQ(toJson(loadConfigOverPreset(dir.file("full.json"), "tiny")), toJson(full));
  // Errors name the preset or the file.
  try {
    loadConfigOverPreset(dir.file("part.json"), "tinyy");
    ADD_FAILURE() << "no error for an unknown preset";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown preset 'tinyy'"), std::string::npos) << e.what();
  }
  depthlab::test::writeFile(dir.file("bad.json"), R"({"model": {"nLayerz": 6}})");
  try {
    loadConfigOverPreset(dir.file("bad.json"), "tiny");
    ADD_FAILURE() << "no error for an unknown key";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("model.nLayerz"), std::string::npos) << e.what();
  }
}

TEST(ExperimentConfig, AnImportedRunIsToldByItsConfigNotByItsTag) {
  depthlab::store::RunInfo run;
  run.configJson = toJson(*presetConfig("tiny")).dump();
  run.tags = {"imported"};  // a tag anyone can add or remove
  EXPECT_FALSE(isImportedRun(run));
  auto j = toJson(*presetConfig("tiny"));
  j["import"] = {{"architecture", "LlamaForCausalLM"}};
  run.configJson = j.dump();
  run.tags = {};
  EXPECT_TRUE(isImportedRun(run));
  run.configJson = "not json";
  EXPECT_FALSE(isImportedRun(run));
}

TEST(ExperimentConfig, AWarmUpLongerThanTheStepsIsFineWhenTheScheduleSpansMore) {
  // resume ID --steps 30 on a 300-step run: the schedule keeps its 300 steps and its warm-up;
  // the run ends inside the warm-up. Once refused, blaming optim.warmupSteps.
  ExperimentConfig c;
  c.optim.steps = 30;
  c.optim.warmupSteps = 30;
  c.optim.scheduleSteps = 300;
  EXPECT_TRUE(validate(c).empty()) << firstIssue(c);
  c.optim.scheduleSteps = 0;  // the schedule is the steps: the warm-up must fit in them
  EXPECT_NE(firstIssue(c).find("optim.warmupSteps"), std::string::npos);
}

TEST(ExperimentConfig, InvalidJsonIsNamedByLineAndColumn) {
  depthlab::test::TempDir dir;
  depthlab::test::writeFile(dir.file("c.json"), "{\n  \"optim\": {\n    \"lr\": 1e-3\n    \"steps\": 5\n  }\n}\n");
  try {
    loadConfigFile(dir.file("c.json"));
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("c.json"), std::string::npos) << what;
    EXPECT_NE(what.find("line 4, column 11"), std::string::npos) << what;  // after "steps"
  }
}

// A group's LNS placement must be read by one of its schemes; one run of such a group (its
// stored config names its own scheme, e.g. the Pre-LN run resumed) is valid on its own.
TEST(ExperimentConfig, APlacementNoSchemeOfTheGroupReadsIsAGroupCheckOnly) {
  ExperimentConfig c = *presetConfig("tiny");
  c.options.lnsPlacement = "before_norm";
  c.schemes = {"pre_ln", "lns"};
  EXPECT_TRUE(validate(c).empty());
  c.schemes = {"pre_ln"};
  ASSERT_FALSE(validate(c).empty());
  EXPECT_NE(validate(c).front().message.find("schemes that take it: lns"), std::string::npos);
  EXPECT_TRUE(validate(c, ConfigScope::Run).empty());
}

// An option only some schemes read (the catalogue's), set in a group without them, is refused
// naming the schemes that read it; QK-norm asked only of schemes that normalise q and k already
// is refused. Group checks, as the placement's.
TEST(ExperimentConfig, AnOptionNoSchemeOfTheGroupReadsIsRefusedNamingItsSchemes) {
  ExperimentConfig c = *presetConfig("tiny");
  c.schemes = {"pre_ln", "lns"};
  c.options.dytAlphaAttn = 1.5;
  ASSERT_EQ(validate(c).size(), 1u);
  EXPECT_EQ(validate(c).front().field, "options.dytAlphaAttn");
  EXPECT_NE(validate(c).front().message.find("schemes that read it: dyt, dyt_lns"),
            std::string::npos);
  EXPECT_TRUE(validate(c, ConfigScope::Run).empty());
  c.schemes = {"pre_ln", "dyt"};
  EXPECT_TRUE(validate(c).empty());
  c.options.dytAlphaAttn = 0;
  c.options.mixLnAlpha = 0.5;
  ASSERT_FALSE(validate(c).empty());
  EXPECT_NE(validate(c).front().message.find("schemes that read it: mix_ln"), std::string::npos);
  c.options.mixLnAlpha = 0.25;
  c.options.qkNorm = true;
  c.schemes = {"hybridnorm", "olmo2"};
  ASSERT_FALSE(validate(c).empty());
  EXPECT_NE(validate(c).front().message.find("normalises q and k already"), std::string::npos);
  c.schemes = {"hybridnorm", "pre_ln"};
  EXPECT_TRUE(validate(c).empty());
}

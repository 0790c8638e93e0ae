// experiment::parameterCount (counted from the block plans) against the parameters a Decoder
// actually registers, for every scheme and the options that add parameters.
#include <gtest/gtest.h>

#include "experiment/presets.h"
#include "model/decoder.h"
#include "support/model_fixtures.h"

using namespace depthlab;

TEST(ParameterCount, EqualsTheModelsParametersForEverySchemeAndOption) {
  for (const auto& scheme : experiment::kSchemes) {
    for (int option = 0; option < 4; ++option) {
      auto c = test::smallConfig(4);
      c.options.skipInit = option == 1;
      c.options.layerScale = option == 2;
      c.options.qkNorm = option == 3;
      SCOPED_TRACE(scheme + " option " + std::to_string(option));
      model::Decoder m(c.model, c.options, scheme);
      int64_t actual = 0;
      for (const auto& p : m->parameters()) actual += p.numel();
      EXPECT_EQ(experiment::parameterCount(c.model, scheme, c.options), actual);
    }
  }
  // An unknown scheme name counts as Pre-LN rather than failing (a runs table must still draw).
  auto c = test::smallConfig(4);
  EXPECT_EQ(experiment::parameterCount(c.model, "not-a-scheme", c.options),
            experiment::parameterCount(c.model, "pre_ln", c.options));
}

TEST(ParameterCount, CountsGroupedQueryHeadsHeadDimBiasesTyingAndPositions) {
  // The shapes imports have: it had counted 4 C^2 of attention whatever the heads.
  struct Shape {
    const char* what;
    void (*apply)(model::ModelConfig&);
  };
  const Shape shapes[] = {
      {"grouped-query", [](model::ModelConfig& m) { m.nKvHeads = 2; }},
      {"head dim", [](model::ModelConfig& m) { m.headDim = 12; }},
      {"q/k/v biases", [](model::ModelConfig& m) { m.qkvBias = true; m.nKvHeads = 1; }},
      {"tied", [](model::ModelConfig& m) { m.tieEmbeddings = true; }},
      {"gpt-2", [](model::ModelConfig& m) {
         m.gatedMlp = false;
         m.mlpBias = true;
         m.outBias = true;
         m.learnedPositions = 32;
         m.rotaryFraction = 0;
       }},
  };
  for (const auto& shape : shapes) {
    SCOPED_TRACE(shape.what);
    auto c = test::smallConfig(3);
    shape.apply(c.model);
    model::Decoder m(c.model, c.options, "pre_ln");
    int64_t actual = 0;
    for (const auto& p : m->parameters()) actual += p.numel();
    EXPECT_EQ(experiment::parameterCount(c.model, "pre_ln", c.options), actual);
  }
}

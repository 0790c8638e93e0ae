// setConfigField: a field set from text by its config-table path, read by the field's type and
// checked against its range, naming what was asked on refusal.
#include <gtest/gtest.h>

#include "experiment/config_set.h"
#include "experiment/presets.h"
#include "support/error_of.h"

using namespace depthlab;
using namespace depthlab::experiment;

TEST(ConfigSet, EachTypeIsReadAndCheckedByTheTable) {
  ExperimentConfig c = *presetConfig("tiny");
  setConfigField(c, "optim.lr", "3e-3", "x");
  EXPECT_DOUBLE_EQ(c.optim.lr, 3e-3);
  applyConfigAssignment(c, "run.bf16=true");
  EXPECT_TRUE(c.run.bf16);
  applyConfigAssignment(c, "data.corpus=/data/c4 with spaces");
  EXPECT_EQ(c.data.corpus, "/data/c4 with spaces");
  applyConfigAssignment(c, "run.seed=9007199254740993");  // 2^53 + 1: exact, not through a double
  EXPECT_EQ(c.run.seed, 9007199254740993LL);
  auto refused = [&](const std::string& a) { return test::errorOf([&] { applyConfigAssignment(c, a); }); };
  EXPECT_NE(refused("model.nLayers=99999999999").find("out of range"), std::string::npos);
  EXPECT_NE(refused("run.seed=9223372036854775808").find("out of range"), std::string::npos);
  EXPECT_NE(refused("run.seed=-1").find("must be >= 0 (got -1)"), std::string::npos);
  EXPECT_NE(refused("model.nLayers= 4").find("is not a whole number"), std::string::npos);
  EXPECT_NE(refused("run.bf16=maybe").find("'maybe' is not true or false"), std::string::npos);
  EXPECT_NE(refused("data.valFraction=0.5").find("must be in (0, 0.5) (got 0.5)"), std::string::npos);
  EXPECT_NE(refused("optim.lr=nan").find("is not a number"), std::string::npos);
  EXPECT_NE(refused("nosuch.key=1").find("sections: model, options, data, optim, run, probes"),
            std::string::npos)
      << refused("nosuch.key=1");
  EXPECT_EQ(c.model.nLayers, presetConfig("tiny")->model.nLayers);  // refusals change nothing
}

// Scheme plans: LNS factors per block, Mix-LN switch point, DeepNorm constants, init options.
#include <gtest/gtest.h>

#include <cmath>

#include "model/block_plan.h"
#include "support/model_fixtures.h"

using namespace depthlab;
using model::planBlocks;

TEST(BlockPlan, LnsScalesEveryBlockByOneOverSqrtOfItsOneBasedIndex) {
  auto c = test::smallConfig(12);
  auto plans = planBlocks(c.model, c.options, "lns");
  ASSERT_EQ(plans.size(), 12u);
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(plans[i].index, i + 1);
    EXPECT_DOUBLE_EQ(plans[i].depthScale, 1.0 / std::sqrt(i + 1.0));
    EXPECT_EQ(plans[i].placement, model::Placement::AfterNorm);
    EXPECT_FALSE(plans[i].postLn);
  }
  EXPECT_DOUBLE_EQ(plans[0].depthScale, 1.0);
}

TEST(BlockPlan, PreLnHasNoScale) {
  for (const auto& p : planBlocks(test::smallConfig(6).model, test::smallConfig(6).options, "pre_ln")) {
    EXPECT_EQ(p.placement, model::Placement::None);
    EXPECT_DOUBLE_EQ(p.depthScale, 1.0);
    EXPECT_FALSE(p.postLn);
    EXPECT_FALSE(p.sandwich);
  }
}

TEST(BlockPlan, MixLnSwitchesAfterRoundAlphaL) {
  EXPECT_EQ(model::mixLnPostBlocks(12, 0.25), 3);
  EXPECT_EQ(model::mixLnPostBlocks(24, 0.25), 6);
  auto c = test::smallConfig(12);
  auto plans = planBlocks(c.model, c.options, "mix_ln");
  for (int i = 0; i < 12; ++i) EXPECT_EQ(plans[i].postLn, i < 3) << i;
  c.options.mixLnAlpha = 0.5;
  plans = planBlocks(c.model, c.options, "mix_ln");
  for (int i = 0; i < 12; ++i) EXPECT_EQ(plans[i].postLn, i < 6) << i;
}

TEST(BlockPlan, DeepNormConstants) {
  auto plans = planBlocks(test::smallConfig(24).model, test::smallConfig(24).options, "deepnorm");
  EXPECT_NEAR(plans[0].residualAlpha, std::pow(48.0, 0.25), 1e-12);   // (2L)^(1/4)
  EXPECT_NEAR(plans[0].xavierGainVOF, std::pow(192.0, -0.25), 1e-12); // (8L)^(-1/4)
  EXPECT_DOUBLE_EQ(plans[0].xavierGainQK, 1.0);
  EXPECT_TRUE(plans[0].postLn);
  auto off = planBlocks(test::smallConfig(24).model, test::smallConfig(24).options, "deepnorm_official");
  EXPECT_NEAR(off[0].residualAlpha, std::sqrt(8.0), 1e-12);
  EXPECT_NEAR(off[0].xavierGainVOF, std::pow(192.0, 0.25), 1e-12);
}

TEST(BlockPlan, InitAndBranchOptions) {
  auto c = test::smallConfig(8);
  c.options.scaledInit = true;
  auto p = planBlocks(c.model, c.options, "pre_ln");
  EXPECT_NEAR(p[3].stdOut, 0.02 / std::sqrt(16.0), 1e-12);
  EXPECT_NEAR(p[3].stdIn, 0.02, 1e-12);
  c.options.scaledInit = false;
  c.options.depthScaledInit = true;
  p = planBlocks(c.model, c.options, "pre_ln");
  EXPECT_NEAR(p[3].stdOut, 0.02 / std::sqrt(8.0), 1e-12);  // 1/sqrt(2l), l = 4
  c.options.skipInit = true;
  c.options.layerScale = true;
  p = planBlocks(c.model, c.options, "lns");
  EXPECT_TRUE(p[0].skipInit);
  EXPECT_NEAR(p[0].skipInitValue, 1.0 / std::sqrt(8.0), 1e-12);
  EXPECT_TRUE(p[0].layerScale);
  EXPECT_DOUBLE_EQ(p[0].layerScaleValue, 1e-4);
}

TEST(BlockPlan, LnsPlacementAblations) {
  auto c = test::smallConfig(4);
  for (auto [name, placement] :
       {std::pair{"before_norm", model::Placement::BeforeNorm},
        std::pair{"after_sublayer", model::Placement::AfterSublayer},
        std::pair{"after_residual", model::Placement::AfterResidual},
        std::pair{"after_attn_only", model::Placement::AfterAttnOnly},
        std::pair{"after_ffn_only", model::Placement::AfterFfnOnly}}) {
    c.options.lnsPlacement = name;
    EXPECT_EQ(planBlocks(c.model, c.options, "lns")[2].placement, placement) << name;
  }
}

TEST(BlockPlan, UnknownSchemeThrows) {
  EXPECT_THROW(planBlocks(test::smallConfig().model, test::smallConfig().options, "bogus"), experiment::ConfigError);
}

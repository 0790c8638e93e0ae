// The scheme catalogue: every scheme has one entry, whole and consistent (ids and names
// unique, pairs and placements that exist, a paper for each), the config's scheme list is the
// catalogue's, and an unknown id is refused naming the known ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "experiment/experiment_config.h"
#include "model/scheme_catalogue.h"
#include "support/error_of.h"

using namespace depthlab;
using namespace depthlab::model;

TEST(SchemeCatalogue, EveryEntryIsWholeAndItsIdsNamesAndPairsAreConsistent) {
  std::set<std::string> ids, names;
  for (const auto& e : schemeCatalogue()) {
    EXPECT_TRUE(ids.insert(e.id).second) << e.id;
    EXPECT_TRUE(names.insert(e.displayName).second) << e.displayName;
    EXPECT_FALSE(e.description.empty()) << e.id;
    EXPECT_NE(e.reference.find("arXiv:"), std::string::npos) << e.id;
    EXPECT_NE(e.plan, nullptr) << e.id;
    if (!e.pairsWith.empty()) {
      EXPECT_NE(findScheme(e.pairsWith), nullptr) << e.id;
    }
    EXPECT_NE(e.pairsWith, e.id);
    for (const auto& p : e.placements) {
      EXPECT_NE(std::find(lnsPlacements().begin(), lnsPlacements().end(), p),
                lnsPlacements().end());
    }
  }
  EXPECT_EQ(experiment::kSchemes, schemeIds());
  EXPECT_EQ(findScheme("pre_ln")->pairsWith, "lns");
  EXPECT_EQ(findScheme("lns")->pairsWith, "pre_ln");
  EXPECT_EQ(schemeDisplayName("pre_ln"), "Pre-LN");
  EXPECT_EQ(schemeDisplayName("some_future_scheme"), "some_future_scheme");
}

TEST(SchemeCatalogue, EachSchemePlansTheBlocksItsFormulaSays) {
  ModelConfig m;
  m.nLayers = 8;
  SchemeOptions o;
  for (int l = 1; l <= m.nLayers; ++l) {
    BlockPlan lns, mix, deep;
    requireScheme("lns").plan(lns, l, m.nLayers, o);
    EXPECT_DOUBLE_EQ(lns.depthScale, 1.0 / std::sqrt(static_cast<double>(l)));
    EXPECT_EQ(lns.placement, Placement::AfterNorm);
    requireScheme("mix_ln").plan(mix, l, m.nLayers, o);
    EXPECT_EQ(mix.postLn, l <= 2) << l;  // round(0.25 * 8) = 2 Post-LN blocks
    requireScheme("deepnorm").plan(deep, l, m.nLayers, o);
    EXPECT_DOUBLE_EQ(deep.residualAlpha, std::pow(16.0, 0.25));
  }
  o.lnsPlacement = "after_ffn_only";
  BlockPlan p;
  requireScheme("lns").plan(p, 3, m.nLayers, o);
  EXPECT_EQ(p.placement, Placement::AfterFfnOnly);
  // Only Pre-LN and LNS after the norm are Llama's blocks: what export-hf can write.
  for (const auto& e : schemeCatalogue()) {
    EXPECT_EQ(e.exportsToHf, e.id == "pre_ln" || e.id == "lns") << e.id;
  }
}

TEST(SchemeCatalogue, AnUnknownSchemeIsRefusedNamingTheKnownOnes) {
  const std::string msg = test::errorOf([] { requireScheme("rezero"); });
  EXPECT_NE(msg.find("unknown scheme 'rezero'"), std::string::npos) << msg;
  for (const auto& id : schemeIds()) EXPECT_NE(msg.find(id), std::string::npos) << id;
}

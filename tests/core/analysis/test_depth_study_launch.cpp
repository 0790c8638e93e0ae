// What launches a depth study: a set name in a config's schemes ("all-depth-fixes") stands for
// every scheme of the set, at the config's one shape and seed; validate() refuses an unknown
// name naming the schemes and the sets, and a set name left unexpanded naming its schemes.
// (experiment_config.cpp's set handling; the study itself: test_depth_study.cpp.)
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "experiment/experiment_config.h"
#include "model/scheme_catalogue.h"
#include "model/scheme_sets.h"

using namespace depthlab;

namespace {

std::string allIssues(const experiment::ExperimentConfig& c) {
  std::string out;
  for (const auto& i : experiment::validate(c)) out += i.message + "\n";
  return out;
}

}  // namespace

TEST(DepthStudyLaunch, ASetNameInAConfigExpandsToEverySchemeOfIt) {
  const auto* all = model::findSchemeSet("all-depth-fixes");
  ASSERT_NE(all, nullptr);
  ASSERT_GT(all->schemes.size(), 2u);
  auto c =
      experiment::configFromJson({{"schemes", {"all-depth-fixes"}}, {"model", {{"nLayers", 6}}}});
  EXPECT_EQ(c.schemes, all->schemes);
  EXPECT_EQ(c.model.nLayers, 6);  // one shape for all of them
  EXPECT_EQ(allIssues(c), "");
  for (const auto& e : model::schemeCatalogue()) {  // every non-experimental scheme, each once
    const bool in = std::find(c.schemes.begin(), c.schemes.end(), e.id) != c.schemes.end();
    EXPECT_EQ(in, !e.experimental) << e.id;
  }
  // Beside schemes: the set's schemes in its place, a scheme already there not twice.
  c = experiment::configFromJson({{"schemes", {"lns", "paper"}}});
  const auto& paper = model::findSchemeSet("paper")->schemes;
  ASSERT_EQ(c.schemes.size(), paper.size());
  EXPECT_EQ(c.schemes.front(), "lns");
  EXPECT_EQ(allIssues(c), "");
  // A plain list stays as written: a scheme listed twice is still refused.
  c = experiment::configFromJson({{"schemes", {"lns", "lns"}}});
  EXPECT_NE(allIssues(c).find("listed twice"), std::string::npos);
}

TEST(DepthStudyLaunch, AnUnknownNameIsRefusedNamingSchemesAndSets) {
  experiment::ExperimentConfig c;
  c.schemes = {"pre_ln", "all-depth-fix"};
  const std::string msg = allIssues(c);
  EXPECT_NE(msg.find("unknown scheme 'all-depth-fix'"), std::string::npos) << msg;
  for (const auto& id : model::schemeIds()) EXPECT_NE(msg.find(id), std::string::npos) << id;
  for (const auto& set : model::schemeSets())
    EXPECT_NE(msg.find(set.id), std::string::npos) << set.id;
  // A set set directly on the struct (not read from a file or a flag) is named as a set.
  c.schemes = {"paper"};
  const std::string set = allIssues(c);
  EXPECT_NE(set.find("'paper' is a set of schemes ("), std::string::npos) << set;
  EXPECT_NE(set.find("pre_ln, lns"), std::string::npos) << set;
}

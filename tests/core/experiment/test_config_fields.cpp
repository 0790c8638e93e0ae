// The config field table (experiment/config_fields.h): JSON both ways goes through it field
// by field, validate() reports every range and every closed set it states, and it covers every
// JSON key.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <set>
#include <variant>

#include "experiment/config_fields.h"
#include "experiment/presets.h"
#include "model/scheme_catalogue.h"

using namespace depthlab::experiment;

namespace {

// Gives every field of `c` a value unlike its default (and legal for its type).
void perturbEveryField(ExperimentConfig& c) {
  int k = 0;
  for (const auto& f : configFields()) {
    ++k;
    std::visit(
        [&](auto* member) {
          using T = std::remove_pointer_t<decltype(member)>;
          if constexpr (std::is_same_v<T, bool>) *member = !*member;
          else if constexpr (std::is_same_v<T, std::string>) *member = "value-" + std::to_string(k);
          else *member = static_cast<T>(*member + k + 1);
        },
        f.ref(c));
  }
}

}  // namespace

TEST(ConfigFields, EveryFieldRoundTripsThroughJson) {
  ExperimentConfig c;
  perturbEveryField(c);
  ExperimentConfig back = configFromJson(toJson(c));
  EXPECT_EQ(toJson(back), toJson(c));
  for (const auto& f : configFields()) {
    SCOPED_TRACE(f.path());
    std::visit([&](auto* a) {
      using T = std::remove_pointer_t<decltype(a)>;
      EXPECT_EQ(*a, *std::get<T*>(f.ref(back)));
    }, f.ref(c));
  }
}

TEST(ConfigFields, TheTableCoversEveryJsonKeyOnce) {
  const auto j = toJson(ExperimentConfig{});
  std::set<std::string> fromJson, fromTable;
  for (const auto& section : configSections()) {
    ASSERT_TRUE(j.contains(section)) << section;
    for (auto it = j[section].begin(); it != j[section].end(); ++it) {
      fromJson.insert(section + "." + it.key());
    }
  }
  for (const auto& f : configFields()) {
    EXPECT_TRUE(fromTable.insert(f.path()).second) << f.path() << " twice";
    EXPECT_NE(std::string(f.label), "") << f.path();
    EXPECT_NE(std::string(f.help), "") << f.path();
    EXPECT_EQ(configField(f.path()), &f);
  }
  EXPECT_EQ(fromJson, fromTable);
}

TEST(ConfigFields, ValidateReportsEveryRangeTheTableStates) {
  for (const auto& f : configFields()) {
    if (!f.range) continue;
    SCOPED_TRACE(f.path());
    auto c = *presetConfig("cpu-demo");
    ASSERT_TRUE(validate(c).empty());
    // Just outside the range (below lo, or above hi when lo is unbounded), and NaN for doubles.
    const double outside = f.range->lo > -1e299 ? f.range->lo - 1 : f.range->hi + 1;
    std::visit([&](auto* member) {
      using T = std::remove_pointer_t<decltype(member)>;
      if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
        *member = static_cast<T>(outside);
      }
    }, f.ref(c));
    bool reported = false;
    for (const auto& issue : validate(c)) {
      if (issue.field == f.path()) {
        reported = true;
        EXPECT_NE(issue.message.find(f.range->rule), std::string::npos) << issue.message;
      }
    }
    EXPECT_TRUE(reported) << "no issue for " << f.path() << " = " << outside;
  }
}

TEST(ConfigFields, RangesRejectNanAndRespectOpenEnds) {
  FieldRange r{0, 1, /*loOpen=*/true, /*hiOpen=*/false, "must be in (0, 1]"};
  EXPECT_FALSE(r.contains(0));
  EXPECT_TRUE(r.contains(1));
  EXPECT_FALSE(r.contains(std::nan("")));
  EXPECT_TRUE(r.contains(0.5));
}

TEST(ConfigFields, ClosedSetsAreTheTablesChoices) {
  // The fields validate() checks against a list carry that list in the table.
  for (const char* path : {"model.norm", "options.lnsPlacement", "data.packing", "optim.optimizer"}) {
    const auto* f = configField(path);
    ASSERT_NE(f, nullptr) << path;
    EXPECT_FALSE(f->choices.values.empty()) << path;
    EXPECT_NE(std::string(f->choices.noun), "") << path;
  }
  EXPECT_EQ(configField("options.lnsPlacement")->choices.values, depthlab::model::lnsPlacements());
  EXPECT_EQ(configField("model.norm")->choices.values, (std::vector<std::string>{"rmsnorm", "layernorm"}));
  for (const auto& f : configFields()) {  // only string fields have choices
    if (f.choices.values.empty()) continue;
    ExperimentConfig c;
    EXPECT_TRUE(std::holds_alternative<std::string*>(f.ref(c))) << f.path();
  }
}

TEST(ConfigFields, ValidateRefusesAValueOutsideTheChoicesNamingThem) {
  for (const auto& f : configFields()) {
    if (f.choices.values.empty()) continue;
    SCOPED_TRACE(f.path());
    for (const auto& v : f.choices.values) {  // every choice passes
      auto c = *presetConfig("cpu-demo");
      *std::get<std::string*>(f.ref(c)) = v;
      for (const auto& issue : validate(c, ConfigScope::Run)) EXPECT_NE(issue.field, f.path()) << issue.message;
      EXPECT_TRUE(choiceIssues(c, f.section).empty());
    }
    auto c = *presetConfig("cpu-demo");
    *std::get<std::string*>(f.ref(c)) = "no-such-value";
    bool reported = false;
    const std::string words = f.path() + ": " + f.choiceRule("no-such-value");
    for (const auto& issue : validate(c, ConfigScope::Run)) {
      if (issue.field != f.path()) continue;
      reported = true;
      EXPECT_EQ(issue.message, words);
      EXPECT_NE(issue.message.find("'no-such-value'"), std::string::npos) << issue.message;
      for (const auto& v : f.choices.values) EXPECT_NE(issue.message.find(v), std::string::npos) << issue.message;
    }
    EXPECT_TRUE(reported);
    // The table's own words for it are validate()'s.
    const auto table = choiceIssues(c, f.section);
    ASSERT_EQ(table.size(), 1u);
    EXPECT_EQ(table[0].field, f.path());
    EXPECT_EQ(table[0].message, words);
    EXPECT_FALSE(f.offers("no-such-value"));
  }
}

// The config field table (experiment/config_fields.h): JSON both ways goes through it field
// by field, validate() reports every range it states, and it covers every JSON key.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <set>
#include <variant>

#include "experiment/config_fields.h"
#include "experiment/presets.h"

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

// The runs --runs names: ids, ranges, all, and paired groups by name, in the order given, each
// once; every mistake answered with what was wrong and what is expected.
#include <gtest/gtest.h>

#include "experiment/run_selection.h"
#include "support/error_of.h"

using namespace depthlab;
using experiment::resolveRunSelection;
using Ids = std::vector<int64_t>;

namespace {

// Runs 1-2 in "cpu-demo 1", 3-6 in "cpu-demo 2" (a four-scheme group), 7 without a group.
store::RunStore storeWithGroups() {
  auto s = store::RunStore::open(":memory:");
  for (int i = 1; i <= 7; ++i) {
    store::NewRun r;
    r.name = "run " + std::to_string(i);
    r.groupName = i <= 2 ? "cpu-demo 1" : i <= 6 ? "cpu-demo 2" : "";
    r.scheme = "pre_ln";
    s.createRun(r);
  }
  return s;
}

}  // namespace

TEST(RunSelection, IdsRangesGroupsAndAllInTheOrderGivenEachOnce) {
  auto s = storeWithGroups();
  EXPECT_EQ(resolveRunSelection("3,4,7", s), (Ids{3, 4, 7}));
  EXPECT_EQ(resolveRunSelection(" 7 , 2 ", s), (Ids{7, 2}));
  EXPECT_EQ(resolveRunSelection("5-7", s), (Ids{5, 6, 7}));
  EXPECT_EQ(resolveRunSelection("group:cpu-demo 2", s), (Ids{3, 4, 5, 6}));
  EXPECT_EQ(resolveRunSelection("7,group: cpu-demo 1 ,1-3", s), (Ids{7, 1, 2, 3}));
  EXPECT_EQ(resolveRunSelection("all", s), (Ids{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(resolveRunSelection("9", s), (Ids{9}));  // the command says it does not exist
}

TEST(RunSelection, MistakesSayWhatWasWrongAndWhatIsExpected) {
  auto s = storeWithGroups();
  auto error = [&](const std::string& text) {
    return test::errorOf([&] { resolveRunSelection(text, s); });
  };
  EXPECT_NE(error("3,x").find("'x' is not a run id (expected ids like 3,4,7, a range 5-8, all, or group:NAME)"),
            std::string::npos);
  EXPECT_NE(error("0").find("'0' is not a run id"), std::string::npos);
  EXPECT_NE(error("-3").find("'-3' is not a run id"), std::string::npos);
  EXPECT_NE(error("8-5").find("'8-5' is not a range of run ids"), std::string::npos);
  EXPECT_NE(error("1-").find("'1-' is not a range"), std::string::npos);
  EXPECT_NE(error("1-2000000").find("too long"), std::string::npos);
  EXPECT_NE(error("").find("no runs given"), std::string::npos);
  EXPECT_NE(error(" , ").find("no runs given"), std::string::npos);
  EXPECT_EQ(error("group:cpu-demo"),
            "--runs: no runs in group 'cpu-demo' (groups: 'cpu-demo 1', 'cpu-demo 2')");
  auto empty = store::RunStore::open(":memory:");
  EXPECT_NE(test::errorOf([&] { resolveRunSelection("group:x", empty); }).find("the database has no groups"),
            std::string::npos);
  EXPECT_NE(test::errorOf([&] { resolveRunSelection("all", empty); }).find("has no runs"), std::string::npos);
}

TEST(RunSelection, AGroupWhoseNameHoldsCommasIsNamedWhole) {
  auto s = storeWithGroups();  // runs 1-7
  for (const char* group : {"lr 1e-3, wd 0.1", "lr 1e-3"}) {  // runs 8 and 9
    store::NewRun r;
    r.name = group;
    r.groupName = group;
    r.scheme = "lns";
    s.createRun(r);
  }
  EXPECT_EQ(resolveRunSelection("group:lr 1e-3, wd 0.1", s), (Ids{8}));
  EXPECT_EQ(resolveRunSelection("group:lr 1e-3, wd 0.1,7", s), (Ids{8, 7}));
  EXPECT_EQ(resolveRunSelection("group:lr 1e-3,7", s), (Ids{9, 7}));  // the longest that names one
  EXPECT_EQ(resolveRunSelection("1,group:lr 1e-3, wd 0.1 , group:cpu-demo 1", s), (Ids{1, 8, 2}));
}

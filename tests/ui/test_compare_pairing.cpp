// Compare's difference heatmap starts on a scheme against the one it pairs with in the scheme
// catalogue: LNS minus Pre-LN of one seed when both are there, else any catalogue pair (Post-LN
// against Pre-LN), the earlier catalogue entry subtracted.
#include <gtest/gtest.h>

#include <QComboBox>

#include "compare/compare_view.h"
#include "daily_use_fixtures.h"

using namespace depthlab;

namespace {

std::pair<int64_t, int64_t> defaultDifference(store::RunStore& s, const std::vector<int64_t>& ids) {
  ui::CompareView v(s, ids);
  auto id = [&](const char* name) {
    return v.findChild<QComboBox*>(QString::fromLatin1(name))->currentData().toLongLong();
  };
  return {id("diffA"), id("diffB")};
}

}  // namespace

TEST(ComparePairing, TheDifferenceStartsOnACataloguePairOfOneSeed) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  const int64_t post = test::addFakeRun(s, {"g1", "post_ln", 1});
  const int64_t lns2 = test::addFakeRun(s, {"g2", "lns", 2});
  const int64_t pre1 = test::addFakeRun(s, {"g1", "pre_ln", 1});
  const int64_t lns1 = test::addFakeRun(s, {"g1", "lns", 1});
  EXPECT_EQ(defaultDifference(s, {post, lns2, pre1, lns1}), std::make_pair(pre1, lns1));
  EXPECT_EQ(defaultDifference(s, {post, lns2, pre1}), std::make_pair(pre1, post));  // one seed first
  EXPECT_EQ(defaultDifference(s, {lns2, pre1}), std::make_pair(pre1, lns2));
}

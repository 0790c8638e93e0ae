// Run ids are never reused: not after the newest run is deleted, not across reopening, not in a
// database created before migration 005, and not for runs created as a group.
#include <gtest/gtest.h>

#include "store/run_store.h"
#include "support/temp_dir.h"

using namespace depthlab::store;

namespace {

int64_t makeRun(RunStore& s, const std::string& name) {
  NewRun nr;
  nr.name = name;
  nr.scheme = "lns";
  return s.createRun(nr);
}

}  // namespace

TEST(RunIds, TheNewestRunsIdIsNotGivenAgainAfterItIsDeleted) {
  depthlab::test::TempDir dir;
  const auto path = dir.file("runs.db");
  int64_t third = 0;
  {
    auto s = RunStore::open(path);
    makeRun(s, "a");
    makeRun(s, "b");
    third = makeRun(s, "c");
    ASSERT_TRUE(s.deleteRun(third));
    EXPECT_EQ(makeRun(s, "d"), third + 1);  // SQLite alone would give `third` again
  }
  auto s = RunStore::open(path);  // and after reopening: the highest id is in the file
  ASSERT_TRUE(s.deleteRun(third + 1));
  EXPECT_EQ(makeRun(s, "e"), third + 2);
}

TEST(RunIds, AGroupsRunsTakeFreshIdsToo) {
  auto s = RunStore::open(":memory:");
  const int64_t a = makeRun(s, "a");
  ASSERT_TRUE(s.deleteRun(a));
  NewRun x, y;
  x.scheme = "pre_ln";
  y.scheme = "lns";
  const auto [name, ids] = s.createGroup({x, y}, [](const std::set<std::string>&) { return "g"; }, {});
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[0], a + 1);
  EXPECT_EQ(ids[1], a + 2);
}

TEST(RunIds, ADatabaseFromBeforeTheRuleKeepsItsHighestId) {
  depthlab::test::TempDir dir;
  const auto path = dir.file("old.db");
  {
    SqliteDb db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    RunStore::migrateTo(db, 4);
    db.exec("INSERT INTO runs(id, name, created_at) VALUES (1, 'a', 1.7e9), (22, 'b', 1.7e9)");
  }
  auto s = RunStore::open(path);
  ASSERT_TRUE(s.deleteRun(22));
  EXPECT_EQ(makeRun(s, "new"), 23);
  EXPECT_EQ(s.integrityCheck(), "ok");
}

// Migrations: from an empty file and from every older schema version, keeping the data.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

#include "store/run_store.h"
#include "support/temp_dir.h"

using namespace depthlab::store;

TEST(RunStoreMigrations, EmptyFileGetsTheLatestSchema) {
  depthlab::test::TempDir dir;
  auto path = dir.file("empty.db");
  depthlab::test::writeFile(path, "");
  auto s = RunStore::open(path);
  EXPECT_EQ(s.schemaVersion(), RunStore::latestSchemaVersion());
  EXPECT_GE(RunStore::latestSchemaVersion(), 2);
}

TEST(RunStoreMigrations, EmptySqliteFileIsInitialised) {
  depthlab::test::TempDir dir;
  auto path = dir.file("blank.db");
  { SqliteDb db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE); db.exec("VACUUM"); }
  auto s = RunStore::open(path);
  EXPECT_EQ(s.schemaVersion(), RunStore::latestSchemaVersion());
}

TEST(RunStoreMigrations, EveryOlderVersionUpgradesKeepingRuns) {
  for (int from = 1; from < RunStore::latestSchemaVersion(); ++from) {
    SCOPED_TRACE("from schema v" + std::to_string(from));
    depthlab::test::TempDir dir;
    auto path = dir.file("old.db");
    {
      SqliteDb db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
      RunStore::migrateTo(db, from);
      // Rows as a v1 binary wrote them (v1 columns only).
      db.exec("INSERT INTO runs(id, name, scheme, status, created_at) "
              "VALUES (1, 'old run', 'pre_ln', 'finished', 1.7e9)");
      db.exec("INSERT INTO scalars(run_id, key, step, value) VALUES (1, 'loss_val', 10, 3.5)");
      db.exec("INSERT INTO run_tags(run_id, tag) VALUES (1, 'legacy')");
      EXPECT_EQ(db.queryInt("PRAGMA user_version"), from);
    }
    auto s = RunStore::open(path);
    EXPECT_EQ(s.schemaVersion(), RunStore::latestSchemaVersion());
    auto r = s.run(1);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->name, "old run");
    EXPECT_EQ(r->status, RunStatus::Finished);
    EXPECT_EQ(r->tags, std::vector<std::string>{"legacy"});
    EXPECT_FALSE(r->stopRequested);
    auto loss = s.scalarSeries(1, "loss_val");
    ASSERT_EQ(loss.size(), 1u);
    EXPECT_DOUBLE_EQ(loss[0].value, 3.5);
    EXPECT_EQ(s.integrityCheck(), "ok");
  }
}

TEST(RunStoreMigrations, ReopeningIsANoOp) {
  depthlab::test::TempDir dir;
  auto path = dir.file("runs.db");
  { auto s = RunStore::open(path); NewRun r; r.name = "x"; s.createRun(r); }
  auto s = RunStore::open(path);
  EXPECT_EQ(s.listRuns().size(), 1u);
}

TEST(RunStoreMigrations, EveryDatabaseHasItsOwnStableId) {
  depthlab::test::TempDir dir;
  std::string a, b;
  { auto s = RunStore::open(dir.file("a.db")); a = s.storeId(); }
  { auto s = RunStore::open(dir.file("b.db")); b = s.storeId(); }
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, b);
  auto again = RunStore::open(dir.file("a.db"));
  EXPECT_EQ(again.storeId(), a);
}

// Processes opening a brand-new file at the same moment: every open succeeds (the schema
// version is re-read under the write lock), one id, one schema.
TEST(RunStoreMigrations, ConcurrentOpensOfANewFileAllSucceed) {
  for (int round = 0; round < 5; ++round) {
    depthlab::test::TempDir dir;
    const auto path = dir.file("new.db");
    constexpr int kProcs = 8;
    std::vector<pid_t> kids;
    for (int i = 0; i < kProcs; ++i) {
      pid_t pid = fork();
      if (pid == 0) {
        try {
          auto s = RunStore::open(path);
          NewRun r;
          r.name = "p" + std::to_string(i);
          s.createRun(r);
          _exit(s.schemaVersion() == RunStore::latestSchemaVersion() ? 0 : 2);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "open failed: %s\n", e.what());
          _exit(1);
        }
      }
      kids.push_back(pid);
    }
    int failed = 0;
    for (pid_t k : kids) {
      int status = 0;
      waitpid(k, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
    }
    EXPECT_EQ(failed, 0) << "round " << round;
    auto s = RunStore::open(path);
    EXPECT_EQ(s.listRuns().size(), static_cast<size_t>(kProcs));
    EXPECT_EQ(s.integrityCheck(), "ok");
  }
}

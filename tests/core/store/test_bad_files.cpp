// Bad database files: a clear StoreError and the file's bytes unchanged.
#include <gtest/gtest.h>

#include <filesystem>

#include "store/run_store.h"
#include "support/temp_dir.h"

using namespace depthlab::store;
using depthlab::test::readFile;
using depthlab::test::writeFile;

namespace {

// Opens `path`, expects a StoreError whose message contains `needle`, and checks the bytes.
void expectRejected(const std::string& path, const std::string& needle) {
  const std::string before = readFile(path);
  try {
    RunStore::open(path);
    FAIL() << "opening " << path << " should fail";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("untouched"), std::string::npos) << e.what();
  }
  EXPECT_EQ(readFile(path), before);
}

std::string makeDatabaseWithData(const depthlab::test::TempDir& dir) {
  auto path = dir.file("good.db");
  {
    auto s = RunStore::open(path);
    NewRun nr;
    nr.name = "r";
    int64_t id = s.createRun(nr);
    WriteBatch b;
    for (int step = 0; step < 4000; ++step) b.layer(step, "variance", std::vector<float>(24, 1.0f));
    s.write(id, b);
  }
  // Fold the WAL into the main file so the file alone holds everything.
  SqliteDb db(path, SQLITE_OPEN_READWRITE);
  db.exec("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;");
  return path;
}

// Overwrites the first 64 bytes of every 4 KiB page from the third on (page headers and cells of
// the data pages); returns the file's new bytes.
std::string corruptPages(const std::string& path) {
  std::string bytes = readFile(path);
  for (size_t i = 8192; i < bytes.size(); i += 4096) {
    for (size_t j = 0; j < 64 && i + j < bytes.size(); ++j) bytes[i + j] = '\x5a';
  }
  writeFile(path, bytes);
  return bytes;
}

}  // namespace

TEST(RunStoreBadFiles, GarbageFile) {
  depthlab::test::TempDir dir;
  auto path = dir.file("garbage.db");
  std::string junk;
  for (int i = 0; i < 5000; ++i) junk.push_back(static_cast<char>((i * 7919) % 251));
  writeFile(path, junk);
  expectRejected(path, "not a DepthLab database");
}

TEST(RunStoreBadFiles, TextFile) {
  depthlab::test::TempDir dir;
  auto path = dir.file("notes.txt");
  writeFile(path, "In the beginning God created the heaven and the earth.\n");
  expectRejected(path, "not a DepthLab database");
}

TEST(RunStoreBadFiles, OtherSqliteDatabase) {
  depthlab::test::TempDir dir;
  auto path = dir.file("other.db");
  { SqliteDb db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    db.exec("CREATE TABLE people(name TEXT); INSERT INTO people VALUES ('ada');"); }
  expectRejected(path, "not a DepthLab database");
}

TEST(RunStoreBadFiles, TruncatedFile) {
  depthlab::test::TempDir dir;
  auto path = makeDatabaseWithData(dir);
  std::string bytes = readFile(path);
  ASSERT_GT(bytes.size(), 100000u);
  writeFile(path, bytes.substr(0, bytes.size() / 2));
  expectRejected(path, "corrupt");
}

TEST(RunStoreBadFiles, CorruptPages) {
  depthlab::test::TempDir dir;
  auto path = makeDatabaseWithData(dir);
  corruptPages(path);
  expectRejected(path, "");
}

TEST(RunStoreBadFiles, AReadOnlyOpenOfCorruptPagesFailsItsReadsClearlyAndWritesNothing) {
  // Read-only opens skip the whole-file check (it reads every page); the pages a command reads
  // still say the file is corrupt, and the file is left as it was.
  depthlab::test::TempDir dir;
  auto path = makeDatabaseWithData(dir);
  const std::string bytes = corruptPages(path);
  std::string message;
  try {
    auto s = RunStore::open(path, RunStore::Mode::ReadOnly);
    s.layerSeries(1, "variance");
    s.listRuns();
  } catch (const StoreError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("corrupt"), std::string::npos) << message;
  EXPECT_EQ(readFile(path), bytes);
}

TEST(RunStoreBadFiles, FutureSchemaVersion) {
  depthlab::test::TempDir dir;
  auto path = dir.file("future.db");
  { auto s = RunStore::open(path); }
  {
    SqliteDb db(path, SQLITE_OPEN_READWRITE);
    db.exec("PRAGMA user_version = " + std::to_string(RunStore::latestSchemaVersion() + 5));
    db.exec("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;");
  }
  expectRejected(path, "newer DepthLab");
}

TEST(RunStoreBadFiles, MissingFolderGivesAClearError) {
  try {
    RunStore::open("/nonexistent-depthlab-dir/sub/runs.db");
    FAIL();
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-depthlab-dir/sub/runs.db"),
              std::string::npos);
  }
}

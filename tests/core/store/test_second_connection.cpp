// Two connections of one process to one database (the window's and its loader thread's):
// opening the second must not drop the first's file locks. Closing any descriptor of a file
// drops every POSIX lock the process holds on it; when opening read the database's header
// through a stream that closed, a trainer process closing its own connection took itself for
// the last one, deleted the WAL under the window's connection, and the file came out corrupt
// (a sweep's second group never appeared in the window).
#include <gtest/gtest.h>

#include <filesystem>

#include "store/run_store.h"
#include "support/build_paths.h"
#include "support/temp_dir.h"

using namespace depthlab;
namespace fs = std::filesystem;

namespace {

int64_t addRun(store::RunStore& s, const std::string& group) {
  store::NewRun nr;
  nr.name = group + " pre_ln";
  nr.groupName = group;
  nr.scheme = "pre_ln";
  return s.createRun(nr);
}

}  // namespace

TEST(RunStoreLocks, OpeningASecondConnectionKeepsTheFirstsLocks) {
  test::TempDir dir;
  const std::string path = dir.file("lab.db");
  auto window = store::RunStore::open(path);
  addRun(window, "first");
  auto loader = store::RunStore::open(path, store::RunStore::Mode::ReadOnly);
  ASSERT_EQ(loader.listRuns().size(), 1u);
  // Another process opens the database and closes it again, as a trainer does at its end.
  std::string out;
  ASSERT_EQ(test::runCommand(depthlab::test::cliPath() + " --db " + path + " runs list 2>&1", &out),
            0)
      << out;
  EXPECT_TRUE(fs::exists(path + "-wal")) << "the WAL went while this process had it open";
  addRun(window, "second");  // written after it: every connection, old and new, sees it
  EXPECT_EQ(loader.listRuns().size(), 2u);
  EXPECT_EQ(store::RunStore::open(path).listRuns().size(), 2u);  // checks every page
}

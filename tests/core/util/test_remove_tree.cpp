// util::removeTree: trees, single files, missing paths, and links that must not be followed.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "support/temp_dir.h"
#include "util/remove_tree.h"

using depthlab::util::removeTree;

namespace {

bool exists(const std::string& p) {
  struct stat st {};
  return lstat(p.c_str(), &st) == 0;
}

void touch(const std::string& p) { std::ofstream(p) << "x"; }

}  // namespace

TEST(RemoveTree, RemovesANestedTreeAndCountsItsEntries) {
  depthlab::test::TempDir dir;
  const std::string root = dir.file("tree");
  ASSERT_EQ(mkdir(root.c_str(), 0755), 0);
  ASSERT_EQ(mkdir((root + "/a").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((root + "/a/b").c_str(), 0755), 0);
  touch(root + "/a/b/f.txt");
  touch(root + "/g.txt");
  std::string error;
  EXPECT_EQ(removeTree(root, &error), 5) << error;  // tree, a, b, f.txt, g.txt
  EXPECT_FALSE(exists(root));
}

TEST(RemoveTree, AFileIsOneEntryAndAMissingPathNone) {
  depthlab::test::TempDir dir;
  touch(dir.file("one"));
  EXPECT_EQ(removeTree(dir.file("one")), 1);
  EXPECT_FALSE(exists(dir.file("one")));
  EXPECT_EQ(removeTree(dir.file("never-there")), 0);
}

TEST(RemoveTree, RemovesLinksWithoutFollowingThem) {
  depthlab::test::TempDir dir;
  const std::string keep = dir.file("keep"), tree = dir.file("tree");
  ASSERT_EQ(mkdir(keep.c_str(), 0755), 0);
  touch(keep + "/precious");
  ASSERT_EQ(mkdir(tree.c_str(), 0755), 0);
  ASSERT_EQ(symlink(keep.c_str(), (tree + "/link").c_str()), 0);
  EXPECT_EQ(removeTree(tree), 2);
  EXPECT_FALSE(exists(tree));
  EXPECT_TRUE(exists(keep + "/precious"));
}

// See remove_tree.h.
#include "util/remove_tree.h"

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace depthlab::util {

namespace {

// nftw's callback has no user pointer; one removal at a time per thread is enough here.
thread_local long t_removed = 0;
thread_local int t_errno = 0;
thread_local std::string t_failed;

int removeEntry(const char* path, const struct stat*, int type, struct FTW*) {
  const int rc = (type == FTW_DP) ? rmdir(path) : unlink(path);
  if (rc != 0) {
    t_errno = errno;
    t_failed = path;
    return 1;  // stop the walk
  }
  ++t_removed;
  return 0;
}

}  // namespace

long removeTree(const std::string& path, std::string* error) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return 0;
    if (error) *error = path + ": " + std::strerror(errno);
    return -1;
  }
  t_removed = 0;
  t_errno = 0;
  t_failed.clear();
  // FTW_DEPTH: contents before their folder; FTW_PHYS: links are entries, not followed.
  const int rc = nftw(path.c_str(), removeEntry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
  if (rc != 0) {
    if (error) {
      *error = (t_failed.empty() ? path : t_failed) + ": " +
               std::strerror(t_errno ? t_errno : errno);
    }
    return -1;
  }
  return t_removed;
}

}  // namespace depthlab::util

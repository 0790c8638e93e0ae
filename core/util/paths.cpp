// DepthLab's file locations; see paths.h.
#include "util/paths.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace depthlab::util {

namespace fs = std::filesystem;

std::string dataDir() {
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x) {
    return (fs::path(x) / "depthlab").string();
  }
  const char* home = std::getenv("HOME");
  return (fs::path(home && *home ? home : ".") / ".local" / "share" / "depthlab").string();
}

std::string defaultDatabasePath(const std::string& cliOverride) {
  if (!cliOverride.empty()) return cliOverride;
  if (const char* env = std::getenv("DEPTHLAB_DB"); env && *env) return env;
  return (fs::path(dataDir()) / "depthlab.db").string();
}

bool folderMeantWritable(const std::string& dir) {
  // POSIX calls, not std::filesystem: PyTorch's libtorch.so exports some of libstdc++'s
  // filesystem symbols (util/remove_tree.h).
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  return (st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) != 0 && ::access(dir.c_str(), W_OK) == 0;
}

void ensureDir(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create folder '" + dir + "': " + ec.message());
}

std::string parentDir(const std::string& path) {
  return fs::path(path).parent_path().string();
}

std::string writerTempPath(const std::string& path) {
  static std::atomic<uint64_t> next{0};
  return path + "." + std::to_string(getpid()) + "-" + std::to_string(next++) + ".tmp";
}

}  // namespace depthlab::util

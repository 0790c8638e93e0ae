// See helper_program.h.
#include "util/helper_program.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "util/run_command.h"

namespace depthlab::util {

namespace fs = std::filesystem;

namespace {

bool executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

}  // namespace

std::string helperProgram(const std::string& name, const char* envVar,
                          const std::string& builtPath) {
  if (const char* env = std::getenv(envVar); env && *env) {
    return executable(env) ? std::string(env) : std::string();
  }
  char self[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n > 0) {
    const fs::path beside =
        fs::path(std::string(self, static_cast<size_t>(n))).parent_path() / name;
    if (executable(beside)) return beside.string();
  }
  if (!builtPath.empty() && executable(builtPath)) return builtPath;
  return programExists(name) ? name : "";
}

}  // namespace depthlab::util

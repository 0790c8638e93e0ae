// See spm_program.h.
#include "util/spm_program.h"

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

std::string spmEncodeProgram() {
  if (const char* env = std::getenv("DEPTHLAB_SPM_ENCODE"); env && *env) {
    return executable(env) ? std::string(env) : std::string();
  }
  char self[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n > 0) {
    const fs::path beside =
        fs::path(std::string(self, static_cast<size_t>(n))).parent_path() / "depthlab-spm-encode";
    if (executable(beside)) return beside.string();
  }
#ifdef DEPTHLAB_SPM_ENCODE_BUILT
  if (executable(DEPTHLAB_SPM_ENCODE_BUILT)) return DEPTHLAB_SPM_ENCODE_BUILT;
#endif
  return programExists("depthlab-spm-encode") ? "depthlab-spm-encode" : "";
}

}  // namespace depthlab::util

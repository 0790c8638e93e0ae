// See hf_fixtures.h.
#include "support/hf_fixtures.h"
#include "support/build_paths.h"

#include <unistd.h>

#include <filesystem>

#include "support/temp_dir.h"
#include "util/content_hash.h"
#include "util/python_env.h"
#include "util/remove_tree.h"

namespace depthlab::test {

namespace fs = std::filesystem;

namespace {
const std::string kScript = depthlab::test::sourceDir() + "/tests/python/hf_models.py";
}

std::string transformersPython() {
  return util::pythonWithModule("transformers, safetensors, torch");
}

std::string transformersMissingReason() {
  if (!transformersPython().empty()) return "";
  return "no Python with transformers, safetensors and torch (make build-torch2 installs them in "
         "DepthLab's environment; or set DEPTHLAB_PYTHON)";
}

int runHfScript(const std::string& args, std::string* out) {
  return runCommand("'" + transformersPython() + "' '" + kScript + "' " + args, out);
}

std::string hfModelSet() {
  const std::string key = util::hex64(util::fnv1a(readFile(kScript) + transformersPython()));
  const fs::path dir = fs::temp_directory_path() / ("depthlab-hf-models-" + key);
  if (fs::exists(dir / "llama-bytes" / "reference.safetensors")) return dir.string();
  // Made in a private folder, then renamed into place: concurrent test processes never see a
  // half-written set (the loser of the rename race uses the winner's).
  const fs::path tmp = dir.string() + ".tmp" + std::to_string(getpid());
  util::removeTree(tmp.string());
  std::string out;
  if (runHfScript("make-set '" + tmp.string() + "'", &out) != 0) {
    throw std::runtime_error("hf_models.py make-set failed: " + out);
  }
  std::error_code ec;
  fs::rename(tmp, dir, ec);
  if (ec) util::removeTree(tmp.string());
  return dir.string();
}

}  // namespace depthlab::test

// See python_env.h.
#include "util/python_env.h"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "util/run_command.h"

namespace depthlab::util {

namespace fs = std::filesystem;

std::string newestTorchPython() {
  if (const char* v = std::getenv("DEPTHLAB_TORCH2_VENV"); v && *v) {
    return fs::exists(fs::path(v) / "bin/python") ? (fs::path(v) / "bin/python").string() : "";
  }
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const fs::path cache = xdg && *xdg ? fs::path(xdg) : fs::path(home ? home : "/") / ".cache";
  std::string best, bestVersion;
  std::error_code ec;
  auto numbers = [](const std::string& v) {  // version order: compare the dotted numbers
    std::vector<int> n;
    std::istringstream in(v);
    for (std::string part; std::getline(in, part, '.');) n.push_back(std::atoi(part.c_str()));
    return n;
  };
  for (const auto& e : fs::directory_iterator(cache / "depthlab", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("torch2-", 0) != 0 || !fs::exists(e.path() / "bin/python")) continue;
    const std::string version = name.substr(7);
    if (best.empty() || numbers(version) > numbers(bestVersion)) {
      best = (e.path() / "bin/python").string();
      bestVersion = version;
    }
  }
  return best;
}

std::string pythonWithModule(const std::string& module) {
  static std::mutex mutex;
  static std::map<std::string, std::string> cache;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(module); it != cache.end()) return it->second;
  std::vector<std::string> candidates;
  if (const char* v = std::getenv("DEPTHLAB_PYTHON"); v && *v) candidates.push_back(v);
  if (auto venv = newestTorchPython(); !venv.empty()) candidates.push_back(venv);
  candidates.push_back("python3");
  candidates.push_back("/usr/bin/python3");
  std::string found;
  for (const auto& python : candidates) {
    if (runProgram({python, "-c", "import " + module}).status == 0) {
      found = python;
      break;
    }
  }
  return cache[module] = found;
}

}  // namespace depthlab::util

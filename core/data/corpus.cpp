// Corpus readers; see corpus.h.
#include "data/corpus.h"

#include "data/token_store.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace depthlab::data {

namespace fs = std::filesystem;

bool isTokenFile(const std::string& path) {
  return path.size() > 4 && path.compare(path.size() - 4, 4, ".bin") == 0;
}

std::string binaryReason(const std::string& text) {
  size_t invalid = 0;
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    unsigned char c = s[i];
    if (c == 0) return "it contains NUL bytes";
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = len > 0 && i + len <= n;
    for (size_t k = 1; ok && k < len; ++k) ok = (s[i + k] & 0xC0) == 0x80;
    if (!ok) {
      ++invalid;
      ++i;
    } else {
      i += len;
    }
  }
  if (n > 0 && invalid * 100 > n) {
    return std::to_string(invalid) + " of " + std::to_string(n) + " bytes are not valid UTF-8";
  }
  return "";
}

namespace {
std::string readWhole(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw DataError("cannot read corpus file '" + p.string() + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

std::string readTextCorpus(const std::string& path) {
  std::error_code ec;
  if (path.empty()) throw DataError("no corpus given");
  if (!fs::exists(path, ec)) throw DataError("corpus '" + path + "' does not exist");
  std::string text;
  if (fs::is_directory(path, ec)) {
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(path, ec)) {
      if (e.is_regular_file() && e.path().filename().string()[0] != '.') files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    std::vector<std::string> skipped;
    for (const auto& f : files) {
      std::string part = readWhole(f);
      if (!binaryReason(part).empty()) {  // skip binaries inside a folder (e.g. caches)
        skipped.push_back(f.filename().string());
        continue;
      }
      text += part;
      if (!part.empty() && part.back() != '\n') text += '\n';
    }
    if (files.empty()) throw DataError("corpus folder '" + path + "' holds no files");
    if (skipped.size() == files.size()) {
      std::string names;
      for (size_t i = 0; i < skipped.size() && i < 5; ++i) names += (i ? ", " : "") + skipped[i];
      throw DataError("corpus folder '" + path + "' holds no text files: all " +
                      std::to_string(skipped.size()) + " are binary (" + names +
                      (skipped.size() > 5 ? ", ..." : "") + ")");
    }
  } else {
    text = readWhole(path);
    if (auto why = binaryReason(text); !why.empty()) {
      throw DataError("corpus '" + path + "' does not look like UTF-8 text (" + why +
                      "); pass a text file, a folder of text files, or a .bin token file");
    }
  }
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw DataError("corpus '" + path + "' is empty");
  }
  return text;
}

std::vector<int32_t> readTokenFile(const std::string& path) {
  return openTokenFiles(path)->readAll();
}

}  // namespace depthlab::data

// Corpus readers; see corpus.h.
#include "data/corpus.h"

#include "data/token_store.h"

#include <algorithm>
#include <filesystem>

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

std::vector<int32_t> readTokenFile(const std::string& path) {
  return openTokenFiles(path)->readAll();
}

}  // namespace depthlab::data

// See content_hash.h.
#include "util/content_hash.h"

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace depthlab::util {

uint64_t fnv1a(std::string_view bytes, uint64_t h) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

uint64_t fnv1aFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read '" + path + "'");
  std::vector<char> buf(1 << 20);
  uint64_t h = 1469598103934665603ull;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    h = fnv1a(std::string_view(buf.data(), static_cast<size_t>(in.gcount())), h);
  }
  return h;
}

}  // namespace depthlab::util

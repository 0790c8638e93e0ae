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

}  // namespace depthlab::util

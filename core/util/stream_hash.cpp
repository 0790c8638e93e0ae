// See stream_hash.h.
#include "util/stream_hash.h"

#include <cstdio>
#include <stdexcept>
#include <vector>

namespace depthlab::util {

uint64_t hashFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error("cannot read '" + path + "'");
  std::vector<char> buf(1 << 20);
  StreamHash h;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) h.update(buf.data(), n);
  const bool bad = std::ferror(f) != 0;
  std::fclose(f);
  if (bad) throw std::runtime_error("error reading '" + path + "'");
  return h.digest();
}

}  // namespace depthlab::util

// StreamHash: the 64-bit content hash of everything the lab keeps a hash of (token stores'
// sources and tokenizer models, import records), fed in pieces of any size: XXH3-64 through
// Debian's libxxhash (util::Xxh3Stream; several GB/s on one core). The value depends only on
// the bytes and the seed, never on how they were split. For change detection, not cryptographic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/xxh3_stream.h"

namespace depthlab::util {

class StreamHash {
 public:
  explicit StreamHash(uint64_t seed = 0) : m_hash(seed) {}
  void update(const void* data, size_t n) {
    m_hash.update(data, n);
    m_total += n;
  }
  void update(std::string_view s) { update(s.data(), s.size()); }
  /// The hash of everything fed so far (the object can keep being fed afterwards).
  uint64_t digest() const { return m_hash.digest(); }
  uint64_t bytes() const { return m_total; }

 private:
  Xxh3Stream m_hash;
  uint64_t m_total = 0;
};

/// StreamHash of a whole file, read in 1 MiB pieces; throws std::runtime_error when unreadable.
uint64_t hashFile(const std::string& path);

}  // namespace depthlab::util

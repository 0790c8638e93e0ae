// StreamHash: a fast 64-bit content hash fed in pieces of any size (four independent lanes of
// 8-byte words, multiply-rotate mixing in the style of xxHash64; several GB/s on one core).
// The value depends only on the bytes, never on how they were split. For change detection of
// large corpora, not cryptographic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace depthlab::util {

class StreamHash {
 public:
  explicit StreamHash(uint64_t seed = 0);
  void update(const void* data, size_t n);
  void update(std::string_view s) { update(s.data(), s.size()); }
  /// The hash of everything fed so far (the object can keep being fed afterwards).
  uint64_t digest() const;
  uint64_t bytes() const { return m_total; }

 private:
  void consumeStripe(const unsigned char* p);
  uint64_t m_lane[4];
  unsigned char m_buf[32];
  size_t m_buffered = 0;
  uint64_t m_total = 0;
  uint64_t m_seed;
};

/// StreamHash of a whole file, read in 1 MiB pieces; throws std::runtime_error when unreadable.
uint64_t hashFile(const std::string& path);

}  // namespace depthlab::util

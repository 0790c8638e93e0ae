// Streaming XXH3-64 through Debian's libxxhash: the checksum of checkpoint files, fed with
// their bytes as they are written or read, so no file is ever held whole to be hashed, and
// behind util::StreamHash (token stores, import records). Not cryptographic: it tells whether
// bytes changed, not who changed them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace depthlab::util {

class Xxh3Stream {
 public:
  explicit Xxh3Stream(uint64_t seed = 0);
  ~Xxh3Stream();
  Xxh3Stream(const Xxh3Stream&) = delete;
  Xxh3Stream& operator=(const Xxh3Stream&) = delete;
  Xxh3Stream(Xxh3Stream&& other) noexcept : m_state(other.m_state) { other.m_state = nullptr; }
  Xxh3Stream& operator=(Xxh3Stream&& other) noexcept;

  void update(const void* data, size_t n);
  /// The hash of everything fed so far (feeding may go on).
  uint64_t digest() const;

 private:
  void* m_state;  // XXH3_state_t, kept out of this header
};

/// XXH3-64 of one buffer.
uint64_t xxh3(const void* data, size_t n, uint64_t seed = 0);

}  // namespace depthlab::util

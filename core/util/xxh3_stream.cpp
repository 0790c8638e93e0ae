// See xxh3_stream.h.
#include "util/xxh3_stream.h"

#include <xxhash.h>

#include <new>

namespace depthlab::util {

Xxh3Stream::Xxh3Stream(uint64_t seed) : m_state(XXH3_createState()) {
  if (!m_state) throw std::bad_alloc();
  XXH3_64bits_reset_withSeed(static_cast<XXH3_state_t*>(m_state), seed);
}

Xxh3Stream::~Xxh3Stream() { XXH3_freeState(static_cast<XXH3_state_t*>(m_state)); }

Xxh3Stream& Xxh3Stream::operator=(Xxh3Stream&& other) noexcept {
  if (this != &other) {
    XXH3_freeState(static_cast<XXH3_state_t*>(m_state));
    m_state = other.m_state;
    other.m_state = nullptr;
  }
  return *this;
}

void Xxh3Stream::update(const void* data, size_t n) {
  if (n) XXH3_64bits_update(static_cast<XXH3_state_t*>(m_state), data, n);
}

uint64_t Xxh3Stream::digest() const {
  return XXH3_64bits_digest(static_cast<const XXH3_state_t*>(m_state));
}

uint64_t xxh3(const void* data, size_t n, uint64_t seed) {
  return XXH3_64bits_withSeed(data, n, seed);
}

}  // namespace depthlab::util

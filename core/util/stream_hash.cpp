// See stream_hash.h.
#include "util/stream_hash.h"

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace depthlab::util {

namespace {
constexpr uint64_t kP1 = 0x9E3779B185EBCA87ull, kP2 = 0xC2B2AE3D27D4EB4Full,
                   kP3 = 0x165667B19E3779F9ull, kP4 = 0x85EBCA77C2B2AE63ull,
                   kP5 = 0x27D4EB2F165667C5ull;
inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline uint64_t round(uint64_t acc, uint64_t input) {
  acc += input * kP2;
  return rotl(acc, 31) * kP1;
}
inline uint64_t merge(uint64_t acc, uint64_t lane) {
  acc ^= round(0, lane);
  return acc * kP1 + kP4;
}
inline uint64_t load64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
}  // namespace

StreamHash::StreamHash(uint64_t seed) : m_seed(seed) {
  m_lane[0] = seed + kP1 + kP2;
  m_lane[1] = seed + kP2;
  m_lane[2] = seed;
  m_lane[3] = seed - kP1;
}

void StreamHash::consumeStripe(const unsigned char* p) {
  m_lane[0] = round(m_lane[0], load64(p));
  m_lane[1] = round(m_lane[1], load64(p + 8));
  m_lane[2] = round(m_lane[2], load64(p + 16));
  m_lane[3] = round(m_lane[3], load64(p + 24));
}

void StreamHash::update(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  m_total += n;
  if (m_buffered > 0) {
    const size_t take = std::min(n, 32 - m_buffered);
    std::memcpy(m_buf + m_buffered, p, take);
    m_buffered += take;
    p += take;
    n -= take;
    if (m_buffered < 32) return;
    consumeStripe(m_buf);
    m_buffered = 0;
  }
  for (; n >= 32; p += 32, n -= 32) consumeStripe(p);
  std::memcpy(m_buf, p, n);
  m_buffered = n;
}

uint64_t StreamHash::digest() const {
  uint64_t h = m_total >= 32 ? rotl(m_lane[0], 1) + rotl(m_lane[1], 7) + rotl(m_lane[2], 12) +
                                   rotl(m_lane[3], 18)
                             : m_seed + kP5;
  if (m_total >= 32) {
    for (uint64_t lane : m_lane) h = merge(h, lane);
  }
  h += m_total;
  size_t i = 0;
  for (; i + 8 <= m_buffered; i += 8) h = rotl(h ^ round(0, load64(m_buf + i)), 27) * kP1 + kP4;
  for (; i < m_buffered; ++i) h = rotl(h ^ (m_buf[i] * kP5), 11) * kP1;
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  return h ^ (h >> 32);
}

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

// Content hashes for cache keys and file checksums: 64-bit FNV-1a, hex-printed. Not
// cryptographic; it tells whether bytes changed, not who changed them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace depthlab::util {

uint64_t fnv1a(std::string_view bytes, uint64_t seed = 1469598103934665603ull);
/// 16 lowercase hex digits.
std::string hex64(uint64_t v);

}  // namespace depthlab::util

// StreamHash is XXH3-64 (libxxhash): equal to the one-shot hash of the same bytes however they
// are split, seeded hashes differ, and hashFile hashes a file's bytes. (It had been a retyped
// XXH64 without its tail step: "abcd" hashed differently from any xxHash.)
#include <gtest/gtest.h>

#include <string>

#include "support/temp_dir.h"
#include "util/stream_hash.h"
#include "util/xxh3_stream.h"

using namespace depthlab;

TEST(StreamHash, IsXxh3HoweverTheBytesAreSplit) {
  std::string bytes;
  for (int i = 0; i < 5000; ++i) bytes += static_cast<char>((i * 131 + 7) % 251);
  const uint64_t whole = util::xxh3(bytes.data(), bytes.size());
  for (size_t piece : {1u, 3u, 31u, 64u, 1000u, 5000u}) {
    util::StreamHash h;
    for (size_t at = 0; at < bytes.size(); at += piece) h.update(bytes.data() + at, std::min(piece, bytes.size() - at));
    EXPECT_EQ(h.digest(), whole) << piece;
    EXPECT_EQ(h.bytes(), bytes.size());
  }
  util::StreamHash abcd;
  abcd.update(std::string("abcd"));
  EXPECT_EQ(abcd.digest(), 0x6497a96f53a89890ull);  // XXH3_64bits("abcd"), libxxhash 0.8.1
  util::StreamHash seeded(42);
  seeded.update(std::string("abcd"));
  EXPECT_EQ(seeded.digest(), 0xd71d944fa0388c5aull);  // XXH3_64bits_withSeed("abcd", 42)
  EXPECT_NE(seeded.digest(), abcd.digest());
  test::TempDir dir;
  test::writeFile(dir.file("f"), bytes);
  EXPECT_EQ(util::hashFile(dir.file("f")), whole);
}

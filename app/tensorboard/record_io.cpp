// See record_io.h.
#include "record_io.h"

#include <boost/crc.hpp>

#include <cstring>

namespace depthlab::tensorboard {

namespace {

void putLe(char* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

uint64_t getLe(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

}  // namespace

uint32_t maskedCrc32c(const char* data, size_t n) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(data, n);
  const uint32_t c = crc.checksum();
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

void writeRecord(std::ostream& out, const std::string& data) {
  char head[12];
  putLe(head, data.size(), 8);
  putLe(head + 8, maskedCrc32c(head, 8), 4);
  char tail[4];
  putLe(tail, maskedCrc32c(data.data(), data.size()), 4);
  out.write(head, sizeof(head));
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  out.write(tail, sizeof(tail));
}

ReadStatus readRecord(std::istream& in, std::string& data, std::string& why) {
  char head[12];
  in.read(head, sizeof(head));
  if (in.gcount() == 0) return ReadStatus::End;
  if (in.gcount() < static_cast<std::streamsize>(sizeof(head))) return ReadStatus::Truncated;
  if (getLe(head + 8, 4) != maskedCrc32c(head, 8)) {
    why = "the length's checksum does not match";
    return ReadStatus::Corrupt;
  }
  const uint64_t n = getLe(head, 8);
  if (n > (uint64_t{1} << 31)) {
    why = "a record claims " + std::to_string(n) + " bytes";
    return ReadStatus::Corrupt;
  }
  data.resize(n);
  in.read(data.data(), static_cast<std::streamsize>(n));
  char tail[4];
  if (static_cast<uint64_t>(in.gcount()) < n) return ReadStatus::Truncated;
  in.read(tail, sizeof(tail));
  if (in.gcount() < static_cast<std::streamsize>(sizeof(tail))) return ReadStatus::Truncated;
  if (getLe(tail, 4) != maskedCrc32c(data.data(), data.size())) {
    why = "the data's checksum does not match";
    return ReadStatus::Corrupt;
  }
  return ReadStatus::Record;
}

}  // namespace depthlab::tensorboard

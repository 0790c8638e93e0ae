// TFRecord framing of TensorBoard event files: each record is its length (uint64, little
// endian), the masked CRC-32C of those 8 bytes, the data, the masked CRC-32C of the data
// (CRC-32C through Boost.CRC; masked as TensorFlow does: rotated right by 15, plus 0xa282ead8).
// Reads and writes bytes only; what the records hold is event.proto's.
#pragma once

#include <cstdint>
#include <istream>
#include <ostream>
#include <string>

namespace depthlab::tensorboard {

uint32_t maskedCrc32c(const char* data, size_t n);

void writeRecord(std::ostream& out, const std::string& data);

enum class ReadStatus { Record, End, Truncated, Corrupt };

/// The next record of `in` into `data`. End at a clean end of file; Truncated when the file
/// stops inside a record (a writer still writing, or cut short); Corrupt when a checksum does
/// not match (`why` says which).
ReadStatus readRecord(std::istream& in, std::string& data, std::string& why);

}  // namespace depthlab::tensorboard

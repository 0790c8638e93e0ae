// The checkpoint file format, version 2: streamed, never held whole. Layout (little-endian):
//   "DLCKPT\0\1" | u32 version (2) | u32 0 | u64 n | header JSON (n bytes) | zeros to 64 |
//   tensor records (raw bytes, each at its header offset from the data start, 64-aligned) |
//   u64 XXH3-64 of every byte before it
// The header holds the run's meta, the tensor table ([name, dtype, shape, offset, bytes]) and
// the optimizer's options and step counters. Writing hashes the bytes on their way to the file
// (fsync, then rename into place); reading hashes them on their way into the destination
// tensors, reading straight into their memory where it can: one pass, a 64 MiB buffer at most.
// Version 1 files are read by checkpoint_v1.cpp; this file knows nothing of them.
#pragma once

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "train/checkpoint_tensors.h"
#include "util/xxh3_stream.h"

namespace depthlab::train {

constexpr uint32_t kCheckpointVersion = 2;

/// Writes `header` (meta fields; the tensor table is added) and `tensors` to `path` through
/// `path`.tmp, fsync and rename. Returns the XXH3-64 of the file. On any error (a full disk
/// included) removes the temporary file, leaves `path` and every other file as they were, and
/// throws CheckpointError saying why.
uint64_t writeCheckpointFile(const std::string& path, nlohmann::json header,
                             const std::vector<NamedTensor>& tensors);

struct TensorRecord {
  std::string name;
  torch::ScalarType dtype;
  std::vector<int64_t> shape;
  uint64_t offset = 0, bytes = 0;
};

/// Reads a version-2 file front to back. The constructor reads and checks the header against
/// the file's size (a truncated file is refused before any tensor is touched).
class CheckpointFileReader {
 public:
  CheckpointFileReader(const std::string& path, int fd, uint64_t fileSize);
  const nlohmann::json& header() const { return m_header; }
  const std::vector<TensorRecord>& records() const { return m_records; }
  /// The checksum the file ends with (not verified by this call).
  uint64_t storedChecksum() const;
  /// Reads every record in file order into `destinationOf(record)` (undefined: read, hashed and
  /// dropped), then checks the checksum; throws CheckpointError on a mismatch. Destinations
  /// must match the record's shape; dtypes are converted.
  void readAll(const std::function<torch::Tensor(const TensorRecord&)>& destinationOf);

 private:
  void read(void* dst, uint64_t n);
  void readInto(const TensorRecord& r, torch::Tensor dst);
  void skip(uint64_t n);
  std::string m_path;
  int m_fd;
  uint64_t m_fileSize, m_pos = 0, m_dataStart = 0, m_dataBytes = 0;
  nlohmann::json m_header;
  std::vector<TensorRecord> m_records;
  std::vector<char> m_buffer;
  util::Xxh3Stream m_hash;
};

}  // namespace depthlab::train

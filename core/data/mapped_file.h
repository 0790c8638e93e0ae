// MappedFile: a read-only memory mapping of a whole file (RAII; move-only). Pages are read on
// first touch and can be dropped by the kernel at any time, so a mapped corpus costs address
// space, not resident memory. No parsing here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace depthlab::data {

class MappedFile {
 public:
  MappedFile() = default;
  /// Maps `path`; throws DataError naming the file when it cannot be opened or mapped.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const unsigned char* data() const { return m_data; }
  size_t size() const { return m_size; }
  const std::string& path() const { return m_path; }
  /// Tells the kernel reads will be scattered (no large read-ahead, fewer resident pages).
  void adviseRandom() const;
  /// Drops this mapping's resident pages (they stay in the page cache and fault back in).
  void releasePages() const;

 private:
  void release();
  std::string m_path;
  const unsigned char* m_data = nullptr;
  size_t m_size = 0;
};

}  // namespace depthlab::data

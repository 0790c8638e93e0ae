// See mapped_file.h.
#include "data/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "data/corpus.h"

namespace depthlab::data {

MappedFile::MappedFile(const std::string& path) : m_path(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw DataError("cannot open '" + path + "': " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw DataError("cannot read '" + path + "': " + std::strerror(err));
  }
  m_size = static_cast<size_t>(st.st_size);
  if (m_size > 0) {
    void* p = ::mmap(nullptr, m_size, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw DataError("cannot map '" + path + "': " + std::strerror(err));
    }
    m_data = static_cast<const unsigned char*>(p);
  }
  ::close(fd);  // the mapping keeps the file
}

MappedFile::~MappedFile() { release(); }

MappedFile::MappedFile(MappedFile&& o) noexcept
    : m_path(std::move(o.m_path)), m_data(std::exchange(o.m_data, nullptr)),
      m_size(std::exchange(o.m_size, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    release();
    m_path = std::move(o.m_path);
    m_data = std::exchange(o.m_data, nullptr);
    m_size = std::exchange(o.m_size, 0);
  }
  return *this;
}

void MappedFile::adviseRandom() const {
  if (m_data) ::madvise(const_cast<unsigned char*>(m_data), m_size, MADV_RANDOM);
}

void MappedFile::releasePages() const {
  if (m_data) ::madvise(const_cast<unsigned char*>(m_data), m_size, MADV_DONTNEED);
}

void MappedFile::release() {
  if (m_data) ::munmap(const_cast<unsigned char*>(m_data), m_size);
  m_data = nullptr;
  m_size = 0;
}

}  // namespace depthlab::data

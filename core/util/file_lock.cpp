// See file_lock.h.
#include "util/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

namespace depthlab::util {

ExclusiveFileLock::ExclusiveFileLock(const std::string& path, const std::function<void()>& waiting,
                                     const std::atomic<bool>* stop) {
  m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (m_fd < 0) return;
  bool told = false;
  while (true) {
    if (::flock(m_fd, LOCK_EX | LOCK_NB) == 0) {
      m_held = true;
      return;
    }
    if (errno != EWOULDBLOCK && errno != EINTR) return;  // a file system without locks
    if (stop && stop->load()) {
      m_stopped = true;
      return;
    }
    if (!told && waiting) waiting();
    told = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

ExclusiveFileLock::~ExclusiveFileLock() {
  if (m_fd >= 0) ::close(m_fd);  // closing the last descriptor releases the lock
}

}  // namespace depthlab::util

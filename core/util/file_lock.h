// An exclusive advisory lock (flock) on a file, held while the object lives: processes, and
// threads that each open the file, that take it on one path run one at a time. Used where two
// preparations of one token store (two ranks, two launches on one corpus) would write each
// other's files. Advisory only: it keeps out nobody who does not take it. Does not throw.
#pragma once

#include <atomic>
#include <functional>
#include <string>

namespace depthlab::util {

class ExclusiveFileLock {
 public:
  /// Opens `path` (created if missing) and takes its lock. While another holder has it, calls
  /// `waiting` once and checks `stop` every 50 ms. Holds nothing when the file cannot be
  /// opened (a read-only folder, where nobody can write either) or when stopped while waiting.
  ExclusiveFileLock(const std::string& path, const std::function<void()>& waiting = {},
                    const std::atomic<bool>* stop = nullptr);
  ~ExclusiveFileLock();
  ExclusiveFileLock(const ExclusiveFileLock&) = delete;
  ExclusiveFileLock& operator=(const ExclusiveFileLock&) = delete;

  bool held() const { return m_held; }
  bool stopped() const { return m_stopped; }  // `stop` was set while it waited

 private:
  int m_fd = -1;
  bool m_held = false, m_stopped = false;
};

}  // namespace depthlab::util

// HeldPort: a TCP port some other socket listens on (the kernel picks it), for tests of what
// happens when a rank's port is taken. Closed when the object goes.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace depthlab::test {

class HeldPort {
 public:
  HeldPort() {
    m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t len = sizeof(a);
    if (m_fd < 0 || ::bind(m_fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
        ::listen(m_fd, 4) != 0 || ::getsockname(m_fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      if (m_fd >= 0) ::close(m_fd);
      throw std::runtime_error("cannot hold a listening port");
    }
    m_port = ntohs(a.sin_port);
  }
  ~HeldPort() { ::close(m_fd); }
  HeldPort(const HeldPort&) = delete;
  HeldPort& operator=(const HeldPort&) = delete;
  int port() const { return m_port; }

 private:
  int m_fd = -1;
  int m_port = 0;
};

}  // namespace depthlab::test

// Process identity via /proc; see process_identity.h.
#include "util/process_identity.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

namespace depthlab::util {

std::string hostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

std::string bootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

int64_t processStartTicks(int64_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  if (!in) return -1;
  std::string line;
  std::getline(in, line);
  // The command name (field 2) may hold spaces and parens: parse after the last ')'.
  auto close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  char state = '?';
  rest >> state;                      // field 3
  if (state == 'Z' || state == 'X') return -1;
  for (int i = 4; i < 22; ++i) rest >> field;
  int64_t start = -1;
  rest >> start;                      // field 22
  return rest ? start : -1;
}

ProcessIdentity currentProcess() {
  ProcessIdentity id;
  id.host = hostName();
  id.bootId = bootId();
  id.pid = static_cast<int64_t>(getpid());
  id.startTicks = processStartTicks(id.pid);
  return id;
}

bool isAlive(const ProcessIdentity& id) {
  if (id.pid <= 0) return false;
  if (id.host != hostName() || id.bootId != bootId()) return false;
  int64_t start = processStartTicks(id.pid);
  return start >= 0 && start == id.startTicks;
}

}  // namespace depthlab::util

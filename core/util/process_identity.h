// Who this process is, precisely enough to tell later whether it is still alive: host name,
// boot id, pid and the pid's start time (guards against pid reuse). Linux /proc based.
#pragma once

#include <cstdint>
#include <string>

namespace depthlab::util {

struct ProcessIdentity {
  std::string host;
  std::string bootId;
  int64_t pid = 0;
  int64_t startTicks = 0;  // field 22 of /proc/<pid>/stat
};

ProcessIdentity currentProcess();
std::string hostName();
std::string bootId();
/// Start time of `pid` in clock ticks since boot, or -1 when no such live (non-zombie) process.
int64_t processStartTicks(int64_t pid);
/// True when the process described by `id` still runs on this machine (same boot).
bool isAlive(const ProcessIdentity& id);

}  // namespace depthlab::util

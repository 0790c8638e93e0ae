// The one-machine launcher behind `depthlab-cli train --nproc N`: starts N copies of a command
// as the ranks of a data-parallel group (with the variables torchrun would set and a free
// loopback port), passes SIGINT / SIGTERM on to them, and waits. When one rank fails, the
// others get `graceSeconds` to notice (their collectives fail at once when a peer's connection
// drops, or at their timeout) and are then terminated: nothing is left running.
// A free port is only free until someone takes it: when the launcher chose the port and rank 0
// exits with kExitPortTaken (another process bound it first), the ranks are stopped at once and
// started again on another port, up to `portAttempts` times. POSIX; no torch.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace depthlab::distributed {

struct LocalLaunch {
  std::string executable;          // e.g. /proc/self/exe's target
  std::vector<std::string> args;   // argv[1..]; every rank gets the same
  int processes = 2;
  double graceSeconds = 60;        // after a rank fails, before the others are terminated
  std::string masterAddr = "127.0.0.1";
  int masterPort = 0;              // 0: a free port on the loopback interface, chosen here
  int portAttempts = 5;            // ports tried when masterPort is 0 and rank 0 finds it taken
  std::function<int()> pickPort;   // how a free port is chosen (empty: freeLoopbackPort)
  std::function<void(const std::string&)> onNotice;  // "rank 1 (pid 123) was killed by signal 9"
};

/// The exit code of a rank 0 that found its chosen port taken (EX_TEMPFAIL), and the variable
/// the launcher sets (to "1") in every rank when it chose the port and will try another.
constexpr int kExitPortTaken = 75;
constexpr const char* kPortRetryVariable = "DEPTHLAB_PORT_RETRY";

/// Runs the ranks to completion; returns 0 when every rank exited 0, else the first failing
/// rank's exit code (128 + signal for a signal). Throws std::runtime_error when a rank cannot
/// be started.
int runLocalRanks(const LocalLaunch& launch);

/// A TCP port on 127.0.0.1 that was free a moment ago.
int freeLoopbackPort();

}  // namespace depthlab::distributed

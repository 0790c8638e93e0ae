// The one-machine launcher; see local_launcher.h.
#include "distributed/local_launcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "distributed/launch_env.h"

namespace depthlab::distributed {

namespace {

std::atomic<int> g_forward{0};  // a signal to pass on to the ranks (0: none)
extern "C" void rememberSignal(int sig) { g_forward.store(sig); }

std::string describeExit(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  return "exited with code " + std::to_string(WEXITSTATUS(status));
}

int exitCodeOf(int status) {
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

}  // namespace

int freeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof(a);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    const std::string err = std::strerror(errno);
    ::close(fd);
    throw std::runtime_error("no free loopback port: " + err);
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

namespace {

using Clock = std::chrono::steady_clock;

// Starts the ranks of one attempt on `port`; throws (after stopping those started) when a rank
// cannot be forked.
std::vector<pid_t> startRanks(const LocalLaunch& launch, int port, bool portChosenHere) {
  LaunchEnv env;
  env.worldSize = launch.processes;
  env.masterAddr = launch.masterAddr;
  env.masterPort = port;
  std::vector<pid_t> pids;
  for (int r = 0; r < launch.processes; ++r) {
    env.rank = env.localRank = r;
    auto vars = launchVariables(env);
    if (portChosenHere) vars.emplace_back(kPortRetryVariable, "1");
    // SIGINT / SIGTERM wait (blocked) across the fork: one sent to the child before it restores
    // the default action would run the launcher's handler there and be lost.
    sigset_t stopSignals, previous;
    sigemptyset(&stopSignals);
    sigaddset(&stopSignals, SIGINT);
    sigaddset(&stopSignals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stopSignals, &previous);
    const pid_t pid = ::fork();
    if (pid != 0) pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    if (pid < 0) {
      for (pid_t p : pids) ::kill(p, SIGTERM);
      throw std::runtime_error(std::string("could not start rank ") + std::to_string(r) + ": " +
                               std::strerror(errno));
    }
    if (pid == 0) {
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      pthread_sigmask(SIG_SETMASK, &previous, nullptr);  // a pending stop now stops the child
      ::unsetenv(kPortRetryVariable);
      for (const auto& [k, v] : vars) ::setenv(k.c_str(), v.c_str(), 1);
      std::vector<char*> argv;
      argv.push_back(const_cast<char*>(launch.executable.c_str()));
      for (const auto& a : launch.args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(launch.executable.c_str(), argv.data());
      std::fprintf(stderr, "depthlab-cli: could not start rank %d (%s): %s\n", r,
                   launch.executable.c_str(), std::strerror(errno));
      ::_exit(127);
    }
    pids.push_back(pid);
  }
  return pids;
}

struct AttemptResult {
  int exitCode = 0;        // 0, or the first failing rank's code (128 + signal for a signal)
  bool portTaken = false;  // rank 0 failed first with kExitPortTaken
};

// Waits for the ranks of one attempt. After the first failure the others get graceSeconds
// (none when rank 0 only found its port taken and `retryPort`), then SIGTERM, then SIGKILL.
AttemptResult waitRanks(const LocalLaunch& launch, const std::vector<pid_t>& pids, bool retryPort) {
  auto notice = [&](const std::string& s) {
    if (launch.onNotice) launch.onNotice(s);
  };
  std::vector<bool> done(pids.size(), false);
  AttemptResult out;
  bool failed = false, terminated = false;
  double grace = launch.graceSeconds;
  Clock::time_point failedAt{};
  size_t running = pids.size();
  while (running > 0) {
    if (int sig = g_forward.exchange(0); sig != 0) {
      for (size_t i = 0; i < pids.size(); ++i) {
        if (!done[i]) ::kill(pids[i], sig);
      }
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      for (size_t i = 0; i < pids.size(); ++i) {
        if (pids[i] != pid || done[i]) continue;
        done[i] = true;
        --running;
        const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (ok || failed) continue;
        failed = true;
        failedAt = Clock::now();
        out.exitCode = exitCodeOf(status);
        out.portTaken = retryPort && i == 0 && WIFEXITED(status) &&
                        WEXITSTATUS(status) == kExitPortTaken;
        if (out.portTaken) {
          grace = 0;  // the others wait for a rendezvous that will never come
        } else {
          notice("rank " + std::to_string(i) + " (pid " + std::to_string(pid) + ") " +
                 describeExit(status) + "; the other ranks stop too");
        }
      }
      continue;
    }
    if (failed && running > 0) {
      const double waited = std::chrono::duration<double>(Clock::now() - failedAt).count();
      if (!terminated && waited >= grace) {
        if (!out.portTaken) {
          notice("terminating the ranks still running " +
                 std::to_string(static_cast<int>(waited)) + " s after the first failure");
        }
        for (size_t i = 0; i < pids.size(); ++i) {
          if (!done[i]) ::kill(pids[i], SIGTERM);
        }
        terminated = true;
      } else if (terminated && waited > grace + 15) {
        for (size_t i = 0; i < pids.size(); ++i) {
          if (!done[i]) ::kill(pids[i], SIGKILL);
        }
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return out;
}

}  // namespace

int runLocalRanks(const LocalLaunch& launch) {
  if (launch.processes < 1) throw std::runtime_error("--nproc must be at least 1");
  const bool choosePort = launch.masterPort <= 0;
  const int attempts = choosePort ? std::max(1, launch.portAttempts) : 1;
  struct sigaction sa{}, oldInt{}, oldTerm{};
  sa.sa_handler = rememberSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &oldInt);
  sigaction(SIGTERM, &sa, &oldTerm);
  struct RestoreSignals {
    struct sigaction *i, *t;
    ~RestoreSignals() {
      sigaction(SIGINT, i, nullptr);
      sigaction(SIGTERM, t, nullptr);
    }
  } restore{&oldInt, &oldTerm};
  AttemptResult result;
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    const int port = !choosePort ? launch.masterPort
                                 : (launch.pickPort ? launch.pickPort() : freeLoopbackPort());
    const bool retry = choosePort && attempt < attempts;
    result = waitRanks(launch, startRanks(launch, port, retry), retry);
    if (!result.portTaken) break;
    if (launch.onNotice) {
      launch.onNotice("port " + std::to_string(port) +
                      " was taken by another process before rank 0 could serve it; starting the "
                      "ranks again on another port");
    }
  }
  return result.exitCode;
}

}  // namespace depthlab::distributed

// The one-machine launcher; see local_launcher.h.
#include "distributed/local_launcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

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

int runLocalRanks(const LocalLaunch& launch) {
  if (launch.processes < 1) throw std::runtime_error("--nproc must be at least 1");
  LaunchEnv env;
  env.worldSize = launch.processes;
  env.masterAddr = launch.masterAddr;
  env.masterPort = launch.masterPort > 0 ? launch.masterPort : freeLoopbackPort();
  struct sigaction sa{}, oldInt{}, oldTerm{};
  sa.sa_handler = rememberSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &oldInt);
  sigaction(SIGTERM, &sa, &oldTerm);
  std::vector<pid_t> pids;
  auto notice = [&](const std::string& s) {
    if (launch.onNotice) launch.onNotice(s);
  };
  for (int r = 0; r < launch.processes; ++r) {
    env.rank = env.localRank = r;
    const auto vars = launchVariables(env);
    const pid_t pid = ::fork();
    if (pid < 0) {
      for (pid_t p : pids) ::kill(p, SIGTERM);
      throw std::runtime_error(std::string("could not start rank ") + std::to_string(r) + ": " +
                               std::strerror(errno));
    }
    if (pid == 0) {
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
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
  using Clock = std::chrono::steady_clock;
  std::vector<bool> done(pids.size(), false);
  int result = 0;
  bool failed = false, terminated = false;
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
        if (!ok && !failed) {
          failed = true;
          failedAt = Clock::now();
          result = exitCodeOf(status);
          notice("rank " + std::to_string(i) + " (pid " + std::to_string(pid) + ") " +
                 describeExit(status) + "; the other ranks stop too");
        }
      }
      continue;
    }
    if (failed && running > 0) {
      const double waited = std::chrono::duration<double>(Clock::now() - failedAt).count();
      if (!terminated && waited > launch.graceSeconds) {
        notice("terminating the ranks still running " + std::to_string(static_cast<int>(waited)) +
               " s after the first failure");
        for (size_t i = 0; i < pids.size(); ++i) {
          if (!done[i]) ::kill(pids[i], SIGTERM);
        }
        terminated = true;
      } else if (terminated && waited > launch.graceSeconds + 15) {
        for (size_t i = 0; i < pids.size(); ++i) {
          if (!done[i]) ::kill(pids[i], SIGKILL);
        }
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  sigaction(SIGINT, &oldInt, nullptr);
  sigaction(SIGTERM, &oldTerm, nullptr);
  return result;
}

}  // namespace depthlab::distributed

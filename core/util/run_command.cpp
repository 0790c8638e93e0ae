// See run_command.h.
#include "util/run_command.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace depthlab::util {

namespace {

// Reads both pipes until both are closed (either may fill up while the other is read).
void drain(int outFd, int errFd, std::string& out, std::string& err) {
  char buf[1 << 16];
  pollfd fds[2] = {{outFd, POLLIN, 0}, {errFd, POLLIN, 0}};
  int open = (outFd >= 0) + (errFd >= 0);
  while (open > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n > 0) {
        (i == 0 ? out : err).append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
}

}  // namespace

CommandResult runProgram(const std::vector<std::string>& argv, const CommandOptions& o) {
  CommandResult r;
  if (argv.empty()) return r;
  int outPipe[2], errPipe[2] = {-1, -1};
  if (pipe(outPipe) != 0) return r;
  if (o.stderrMode == Stderr::Capture && pipe(errPipe) != 0) {
    close(outPipe[0]);
    close(outPipe[1]);
    return r;
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return r;
  if (pid == 0) {  // child: only async-signal-safe calls until exec
    const int in = open(o.stdinFile.empty() ? "/dev/null" : o.stdinFile.c_str(), O_RDONLY);
    if (in < 0) _exit(126);
    dup2(in, 0);
    dup2(outPipe[1], 1);
    if (o.stderrMode == Stderr::Merge) {
      dup2(outPipe[1], 2);
    } else if (o.stderrMode == Stderr::Capture) {
      dup2(errPipe[1], 2);
    } else {
      const int null = open("/dev/null", O_WRONLY);
      if (null >= 0) dup2(null, 2);
    }
    for (int fd = 3; fd < 1024; ++fd) close(fd);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(outPipe[1]);
  if (errPipe[1] >= 0) close(errPipe[1]);
  drain(outPipe[0], errPipe[0], r.output, r.errors);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

bool programExists(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (!dir.empty() && access((dir + "/" + name).c_str(), X_OK) == 0) return true;
  }
  return false;
}

}  // namespace depthlab::util

// See run_command.h.
#include "util/run_command.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
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

// Every descriptor above stderr closed in the child, whatever its number (not only those
// below 1024): glibc 2.34's closefrom action, else each descriptor open now.
void closeFromThree(posix_spawn_file_actions_t& fa) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
#else
  if (DIR* d = opendir("/proc/self/fd")) {
    const int own = dirfd(d);
    while (const dirent* e = readdir(d)) {
      const int fd = std::atoi(e->d_name);
      if (fd >= 3 && fd != own) posix_spawn_file_actions_addclose(&fa, fd);
    }
    closedir(d);
  }
#endif
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
  auto closeAll = [&] {
    for (int fd : {outPipe[0], outPipe[1], errPipe[0], errPipe[1]}) {
      if (fd >= 0) close(fd);
    }
  };
  const std::string in = o.stdinFile.empty() ? "/dev/null" : o.stdinFile;
  if (access(in.c_str(), R_OK) != 0) {  // as the shell: 126, the program was not started
    closeAll();
    r.status = 126;
    return r;
  }
  // posix_spawn (vfork-like in glibc): no copy of a trainer's address space, every descriptor
  // above stderr closed in the child whatever its number, nothing leaked when it fails.
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, in.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, outPipe[1], 1);
  if (o.stderrMode == Stderr::Merge) {
    posix_spawn_file_actions_adddup2(&fa, outPipe[1], 2);
  } else if (o.stderrMode == Stderr::Capture) {
    posix_spawn_file_actions_adddup2(&fa, errPipe[1], 2);
  } else {
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  }
  closeFromThree(fa);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {  // as the shell: 127, the program could not be run
    closeAll();
    r.status = 127;
    return r;
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

// launchQuiet: starts a program in the background with its output discarded, for tests that
// kill it at a chosen moment (the crash campaign, reproduce killed mid-way). The caller waits
// for or kills the returned pid.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace depthlab::test {

/// args[0] is the executable's path.
inline pid_t launchQuiet(const std::vector<std::string>& args) {
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    (void)freopen("/dev/null", "w", stdout);
    (void)freopen("/dev/null", "w", stderr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

}  // namespace depthlab::test

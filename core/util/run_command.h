// Running an external program and capturing what it prints on stdout (the tools DepthLab drives
// out of process: spm_*, bible, nvidia-smi, the Python references). Programs are started with
// an argument vector (posix_spawnp: no copy of a multi-GB trainer's memory, every other
// descriptor closed in the child), never through a shell, so no argument can be taken for
// shell syntax and quoting cannot be forgotten.
#pragma once

#include <string>
#include <vector>

namespace depthlab::util {

struct CommandResult {
  int status = -1;       // exit code; -1 when it could not start or died on a signal
  std::string output;    // stdout (and stderr with Stderr::Merge)
  std::string errors;    // stderr with Stderr::Capture
};

enum class Stderr { Discard, Merge, Capture };

struct CommandOptions {
  std::string stdinFile;           // "" = /dev/null
  Stderr stderrMode = Stderr::Discard;
};

/// Runs argv[0] (looked up on PATH) with argv; waits for it.
CommandResult runProgram(const std::vector<std::string>& argv, const CommandOptions& o = {});
/// True when `name` is an executable on PATH.
bool programExists(const std::string& name);

}  // namespace depthlab::util

// Running a shell command and capturing what it prints on stdout (the tools DepthLab drives
// out of process: spm_*, bible, nvidia-smi, the PyTorch reference). No escaping: callers
// quote their arguments.
#pragma once

#include <string>

namespace depthlab::util {

struct CommandResult {
  int status = -1;       // exit code, -1 when it could not run or died on a signal
  std::string output;    // stdout
};

CommandResult runCommand(const std::string& command);
/// Single-quotes a shell argument.
std::string shellQuote(const std::string& s);

}  // namespace depthlab::util

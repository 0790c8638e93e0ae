// Where one of the lab's helper programs is (depthlab-spm-encode, depthlab-tensorboard: work
// that must run in a process without LibTorch). Does not run it.
#pragma once

#include <string>

namespace depthlab::util {

/// $`envVar` when set (used as given when executable, else ""), else `name` beside the running
/// program, at `builtPath` (its place in the build tree; may be empty), or on PATH; "" when
/// there is none.
std::string helperProgram(const std::string& name, const char* envVar,
                          const std::string& builtPath);

}  // namespace depthlab::util

// Runs bench/reference_model.py (the independent PyTorch implementation) with Debian's
// /usr/bin/python3; tells when that interpreter has no torch so tests can skip with a reason.
#pragma once

#include <string>

namespace depthlab::test {

/// "" when /usr/bin/python3 can import torch, else why not.
std::string pythonTorchMissingReason();
/// Runs the reference script with `args`; returns exit code, output in `out`.
int runReference(const std::string& args, std::string* out);

}  // namespace depthlab::test

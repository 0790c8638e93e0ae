// See python_reference.h.
#include "support/python_reference.h"
#include "support/build_paths.h"

#include "support/temp_dir.h"

namespace depthlab::test {

namespace {
constexpr const char* kPython = "/usr/bin/python3";
}

std::string pythonTorchMissingReason() {
  static const std::string reason = [] {
    std::string out;
    int rc = runCommand(std::string(kPython) + " -c 'import torch'", &out);
    return rc == 0 ? std::string()
                   : std::string("/usr/bin/python3 cannot import torch (install python3-torch): ") +
                         out;
  }();
  return reason;
}

int runReference(const std::string& args, std::string* out) {
  return runCommand(std::string(kPython) + " " + depthlab::test::sourceDir() +
                        "/bench/reference_model.py " + args,
                    out);
}

}  // namespace depthlab::test

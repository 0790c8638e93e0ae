// The paths given by CMake to this one source (see build_paths.h).
#include "support/build_paths.h"

namespace depthlab::test {

std::string sourceDir() { return DEPTHLAB_SOURCE_DIR; }
std::string cliPath() { return DEPTHLAB_CLI_PATH; }
std::string guiPath() {
#ifdef DEPTHLAB_GUI_PATH
  return DEPTHLAB_GUI_PATH;
#else
  return {};
#endif
}

}  // namespace depthlab::test

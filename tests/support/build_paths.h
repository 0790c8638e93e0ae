// Where the tests find the source tree and the built executables.
// The paths are compiled into build_paths.cpp alone, never into a test source's flags: every
// other test source then compiles the same in any clone, so ccache (base_dir) serves them.
#pragma once

#include <string>

namespace depthlab::test {

std::string sourceDir();  // the checkout's root
std::string cliPath();    // the built depthlab-cli
std::string guiPath();    // the built lab window; empty where the GUI is not built

}  // namespace depthlab::test

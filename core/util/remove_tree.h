// Removes a file or a folder with everything in it, with POSIX calls (nftw, unlink, rmdir) rather
// than std::filesystem::remove_all: PyTorch's pip libtorch.so exports its own copy of
// std::filesystem whose error_code overload of remove_all jumped to address 0 on the lab's H200
// machine, even in executables that list libstdc++ first (see core/CMakeLists.txt). Symbolic
// links are removed, never followed. Does not throw.
#pragma once

#include <string>

namespace depthlab::util {

/// Removes `path` (file, link or folder tree). Returns the number of entries removed; a missing
/// path removes nothing and is no error. On failure returns -1 and sets `error` when given.
long removeTree(const std::string& path, std::string* error = nullptr);

}  // namespace depthlab::util

// Executables linked with PyTorch's own libtorch.so must still use the system's libstdc++:
// that libtorch.so exports a private copy of std::filesystem (and more) which crashes on
// Debian 12 (see core/CMakeLists.txt). Checks where the dynamic linker binds the symbols, and
// that the calls work. Meaningful in both configurations; it failed with signal 11 in the
// torch2 one before the link-order fix.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/temp_dir.h"

namespace {

std::string libraryDefining(const char* mangled) {
  void* symbol = dlsym(RTLD_DEFAULT, mangled);
  if (!symbol) return "(not found)";
  Dl_info info{};
  if (!dladdr(symbol, &info) || !info.dli_fname) return "(unknown)";
  return info.dli_fname;
}

}  // namespace

TEST(LibstdcxxBinding, FilesystemComesFromTheSystemLibrary) {
  // std::filesystem::remove_all(path const&, error_code&) and create_directories(path const&)
  for (const char* mangled : {"_ZNSt10filesystem10remove_allERKNS_7__cxx114pathERSt10error_code",
                              "_ZNSt10filesystem18create_directoriesERKNS_7__cxx114pathE"}) {
    const std::string lib = libraryDefining(mangled);
    EXPECT_NE(lib.find("libstdc++"), std::string::npos) << mangled << " is bound to " << lib;
  }
}

TEST(LibstdcxxBinding, RemoveAllWithErrorCodeRemovesATree) {
  depthlab::test::TempDir dir;
  const auto root = std::filesystem::path(dir.path()) / "tree";
  std::filesystem::create_directories(root / "a" / "b");
  std::ofstream(root / "a" / "b" / "f.txt") << "x";
  std::error_code ec;
  const auto removed = std::filesystem::remove_all(root, ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_EQ(removed, 4u);  // tree, a, b, f.txt
  EXPECT_FALSE(std::filesystem::exists(root));
}

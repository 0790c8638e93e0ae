// PyTorch's pip libtorch.so exports its own copy of parts of libstdc++, std::filesystem among
// them; its remove_all(path, error_code&) jumps to address 0. Listing libstdc++ first when linking
// (core/CMakeLists.txt) makes the system's copy win on Debian 12, but not on the lab's H200 image
// (Ubuntu toolchain: std::filesystem was still bound to libtorch.so there, and remove_all crashed).
// So DepthLab never calls remove_all (util::removeTree instead), and these tests check what it
// does rely on: the std::filesystem calls it makes work whichever copy they bind to, and no
// source calls remove_all again. Meaningful in both configurations.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "support/build_paths.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;

namespace {

std::string libraryDefining(const char* mangled) {
  void* symbol = dlsym(RTLD_DEFAULT, mangled);
  if (!symbol) return "(not found)";
  Dl_info info{};
  if (!dladdr(symbol, &info) || !info.dli_fname) return "(unknown)";
  return info.dli_fname;
}

}  // namespace

TEST(LibstdcxxBinding, TheFilesystemCallsDepthLabMakesWork) {
  // Where they bind, for the log: libstdc++ here; libtorch.so on the H200 image.
  std::cout << "std::filesystem::create_directories bound to "
            << libraryDefining("_ZNSt10filesystem18create_directoriesERKNS_7__cxx114pathE") << "\n";
  depthlab::test::TempDir dir;
  const fs::path root = fs::path(dir.path()) / "runs" / "store" / "run-1";
  std::error_code ec;
  EXPECT_TRUE(fs::create_directories(root, ec)) << ec.message();
  std::ofstream(root / "a.tmp") << "checkpoint";
  fs::rename(root / "a.tmp", root / "a.pt", ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_TRUE(fs::exists(root / "a.pt"));
  EXPECT_EQ(fs::file_size(root / "a.pt"), 10u);
  int entries = 0;
  for (const auto& e : fs::directory_iterator(root)) entries += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(entries, 1);
  EXPECT_TRUE(fs::remove(root / "a.pt", ec)) << ec.message();
  EXPECT_FALSE(fs::exists(root / "a.pt"));
  EXPECT_FALSE(fs::temp_directory_path().empty());
}

TEST(LibstdcxxBinding, NoSourceCallsRemoveAll) {
  // A grep over the tracked C++ sources (this file aside): remove_all must not come back.
  std::string listed;
  depthlab::test::runCommand(
      "cd '" + depthlab::test::sourceDir() + "' && git ls-files -- '*.cpp' | head -1", &listed);
  if (listed.find(".cpp") == std::string::npos) GTEST_SKIP() << "not a git checkout";
  std::string out;
  const int rc = depthlab::test::runCommand(
      "cd '" + depthlab::test::sourceDir() +
          "' && git ls-files -- '*.cpp' '*.h' '*.cu' 2>/dev/null"
          " | grep -v 'test_libstdcxx_binding.cpp' | xargs -r grep -ln 'remove_all *(' ; true",
      &out);
  ASSERT_EQ(rc, 0);
  EXPECT_EQ(out, "") << "std::filesystem::remove_all is called in:\n" << out;
}

TEST(SourceRules, ModulesBelowExperimentDoNotIncludeIt) {
  // Each module owns its config (model/model_config.h, data/data_config.h,
  // train/optim_config.h, probes/probe_config.h); experiment/ composes them, never the reverse.
  std::string listed;
  depthlab::test::runCommand(
      "cd '" + depthlab::test::sourceDir() + "' && git ls-files -- 'core/*.h' | head -1", &listed);
  if (listed.find(".h") == std::string::npos) GTEST_SKIP() << "not a git checkout";
  std::string out;
  depthlab::test::runCommand(
      "cd '" + depthlab::test::sourceDir() +
          "' && git ls-files -- 'core/model/*' 'core/train/*' 'core/data/*'"
          " 'core/probes/*' 'core/kernels/*' 'core/util/*' 'core/store/*' | xargs -r grep -ln"
          " '#include \"experiment/' ; true",
      &out);
  EXPECT_EQ(out, "") << "these include experiment/ headers:\n" << out;
}

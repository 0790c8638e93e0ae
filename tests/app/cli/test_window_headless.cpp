// The window's headless uses: `depthlab --screenshot` draws offscreen by itself where there is no
// display (it had refused), prints no "XDG_RUNTIME_DIR not set" warning, and a start-up error
// offscreen ends the program with the message on stderr instead of waiting on a dialog nobody
// can close.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/build_paths.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

// The window with no display, no platform chosen and no runtime folder: as over ssh or in CI.
std::string bare(const test::TempDir& dir) {
  return "env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM -u XDG_RUNTIME_DIR "
         "XDG_DATA_HOME='" +
         dir.file("data") + "' XDG_CONFIG_HOME='" + dir.file("config") + "' timeout -k 5 120 '" +
         depthlab::test::guiPath() + "' ";
}

}  // namespace

TEST(WindowHeadless, AScreenshotNeedsNoDisplayAndPrintsNoRuntimeWarning) {
  if (test::guiPath().empty()) GTEST_SKIP() << "built without the window (DEPTHLAB_BUILD_GUI=OFF)";
  test::TempDir dir;
  std::string out;
  const int rc = test::runCommand(bare(dir) + "--db '" + dir.file("lab.db") +
                                      "' --size 900x600 "
                                      "--screenshot '" +
                                      dir.file("shot.png") + "'",
                                  &out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_TRUE(std::filesystem::exists(dir.file("shot.png"))) << out;
  EXPECT_EQ(out.find("XDG_RUNTIME_DIR"), std::string::npos) << out;
}

TEST(WindowHeadless, AnErrorOffscreenEndsTheProgramWithItsMessage) {
  if (test::guiPath().empty()) GTEST_SKIP() << "built without the window (DEPTHLAB_BUILD_GUI=OFF)";
  test::TempDir dir;
  test::writeFile(dir.file("broken.db"),
                  std::string("SQLite format 3") + '\0' + std::string(5000, 'x'));
  std::string out;
  const int rc = test::runCommand(bare(dir) + "--db '" + dir.file("broken.db") +
                                      "' --screenshot '" + dir.file("shot.png") + "'",
                                  &out);
  EXPECT_EQ(rc, 1) << out;  // not 124: it did not wait on a dialog
  EXPECT_NE(out.find("broken.db"), std::string::npos) << out;
}

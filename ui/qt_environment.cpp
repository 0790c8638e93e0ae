// See qt_environment.h.
#include "qt_environment.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace depthlab::ui {

bool haveDisplay() {
  const char* platform = std::getenv("QT_QPA_PLATFORM");
  if (platform && *platform) return true;  // offscreen, xcb, wayland... chosen explicitly
  return std::getenv("DISPLAY") || std::getenv("WAYLAND_DISPLAY");
}

bool prepareQtEnvironment(bool headless) {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  if (!runtime || !*runtime) {
    const std::string dir = "/tmp/depthlab-runtime-" + std::to_string(::getuid());
    struct stat st {};
    ::mkdir(dir.c_str(), 0700);  // Qt insists on 0700 and on owning it
    if (::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::getuid()) {
      ::chmod(dir.c_str(), 0700);
      ::setenv("XDG_RUNTIME_DIR", dir.c_str(), 1);
    }
  }
  if (!headless || haveDisplay()) return false;
  ::setenv("QT_QPA_PLATFORM", "offscreen", 1);
  return true;
}

}  // namespace depthlab::ui

// What the lab's Qt programs (the window, depthlab-export) set up before QApplication exists:
// Qt's offscreen platform where there is no display and no window is needed, and a private
// XDG_RUNTIME_DIR where none is set (containers, CI, ssh), which Qt otherwise warns about on
// every start. Environment variables only; creates no Qt object.
#pragma once

namespace depthlab::ui {

/// True when a platform was chosen (QT_QPA_PLATFORM) or a display is there (DISPLAY, WAYLAND_DISPLAY).
bool haveDisplay();

/// Sets QT_QPA_PLATFORM=offscreen when there is no display and `headless` work (an export, a
/// screenshot) needs none; sets XDG_RUNTIME_DIR to a private folder (0700) when unset. Returns
/// whether the offscreen platform was chosen here.
bool prepareQtEnvironment(bool headless);

}  // namespace depthlab::ui

#!/usr/bin/env bash
# Opens the lab window on the default corpus and database; without a display, says how to
# use the CLI instead. Called by `make run`.
set -euo pipefail
build_dir=${1:-build/release}
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && [ -z "${QT_QPA_PLATFORM:-}" ]; then
  echo "make run: no display (DISPLAY/WAYLAND_DISPLAY unset), so the lab window cannot open."
  echo "  The headless CLI does everything the window does:"
  echo "    $build_dir/app/depthlab-cli --help"
  echo "    $build_dir/app/depthlab-cli runs list"
  echo "  Or run the window under Xvfb: xvfb-run -a $build_dir/app/depthlab"
  exit 0
fi
exec "$build_dir/app/depthlab" "$@"

#!/usr/bin/env bash
# Makes the README's screenshot again (`make screenshot`): trains the tour's group (cpu-demo,
# Pre-LN vs LNS, 600 steps on the default corpus; ~4 minutes on 2 cores) into a temporary
# database and renders its dashboard with the lab's own --screenshot on Qt's offscreen platform.
# Leaves the run database, checkpoints and window settings of the user alone: the database, the
# checkpoints and the settings go to a temporary folder removed at the end. Does not shrink the
# PNG; check its size (the README's image stays under 300 KB) and look at it before committing.
set -euo pipefail
build_dir=${1:-build/release}
out=${2:-docs/images/dashboard.png}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cli="$build_dir/app/depthlab-cli"
gui="$build_dir/app/depthlab"
"$cli" --db "$tmp/lab.db" train --preset cpu-demo --name tour --checkpoint-dir "$tmp/checkpoints" \
  --quiet
mkdir -p "$(dirname "$out")"
QT_QPA_PLATFORM=offscreen XDG_CONFIG_HOME="$tmp/config" \
  "$gui" --db "$tmp/lab.db" --group tour --size 1400x900 --screenshot "$tmp/dashboard.png"
mv "$tmp/dashboard.png" "$out"
echo "make screenshot: wrote $out ($(stat -c %s "$out") bytes)"

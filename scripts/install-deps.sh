#!/usr/bin/env bash
# Installs the Debian packages DepthLab needs, and only those that are missing.
# Checks each with `dpkg -s`; runs `apt-get update` only when something must be installed;
# uses sudo when not root. Says what it did. Does not build anything.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  libtorch-dev libopenblas0-openmp
  qt6-base-dev qt6-svg-dev libqcustomplot-dev libqcustomplot2.1-qt6
  libsqlite3-dev sqlite3
  libgtest-dev libboost-math-dev
  libprotobuf-dev protobuf-compiler  # depthlab-tensorboard: TensorBoard event files
  nlohmann-json3-dev libcli11-dev zlib1g-dev libzstd-dev libgloo-dev libxxhash-dev
  sentencepiece libsentencepiece-dev
  xvfb xauth
  python3-torch
  bible-kjv bible-kjv-text
  poppler-utils fonts-lmodern
  clang-format  # make test checks that changed sources are formatted (scripts/check-format.sh)
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg -s "$p" >/dev/null 2>&1; then missing+=("$p"); fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present, nothing to do."
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1
  fi
fi

echo "install-deps: installing ${#missing[@]} missing package(s): ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: done."

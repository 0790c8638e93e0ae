#!/usr/bin/env bash
# Run here (the Debian development machine), from the project root, before a GPU check.
# Makes .gpu-deps/ in the checkout (about 8 MB, ignored by git): the header-only and static
# dependencies a GPU machine without Debian -dev packages and without a network needs to build
# DepthLab without the GUI (nlohmann-json, CLI11, GoogleTest/GoogleMock, SQLite, gloo's headers,
# the Boost headers Boost.Math's students_t includes, found by the compiler; xxHash's headers and
# static library) with their CMake
# configs, a small corpus, and scripts/gpu-check.sh. PyTorch (and with it a CUDA LibTorch) and
# nvcc must be on the GPU machine already. Then, there: bash .gpu-deps/gpu-check.sh
set -euo pipefail
root=$(git rev-parse --show-toplevel)
out="$root/.gpu-deps"; p="$out/prefix"; lib="$p/lib/x86_64-linux-gnu"
for pkg in nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev libsqlite3-dev libgloo-dev libboost-math-dev libxxhash-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || { echo "gpu-bundle: apt-get install $pkg first" >&2; exit 1; }
done
rm -rf "$out"; mkdir -p "$p/include" "$p/share/cmake" "$lib/cmake"
cp -r /usr/include/nlohmann /usr/include/CLI /usr/include/gtest /usr/include/gmock /usr/include/gloo \
      /usr/include/sqlite3.h /usr/include/sqlite3ext.h /usr/include/xxhash.h /usr/include/xxh3.h \
      "$p/include/"
cp -r /usr/share/cmake/nlohmann_json /usr/share/cmake/CLI11 "$p/share/cmake/"
cp -r /usr/lib/x86_64-linux-gnu/cmake/GTest "$lib/cmake/"
cp /usr/lib/x86_64-linux-gnu/lib{gtest,gtest_main,gmock,gmock_main,sqlite3,xxhash}.a "$lib/"
# Boost: only the headers students_t.hpp pulls in (all of /usr/include/boost is ~170 MB).
echo '#include <boost/math/distributions/students_t.hpp>' | c++ -std=c++17 -M -x c++ - |
  tr ' \\' '\n\n' | grep '^/usr/include/boost/' | sort -u |
  while read -r h; do mkdir -p "$p/include/$(dirname "${h#/usr/include/}")"; cp "$h" "$p/include/${h#/usr/include/}"; done
cp -r /usr/lib/x86_64-linux-gnu/cmake/Boost-1.74.0 /usr/lib/x86_64-linux-gnu/cmake/boost_headers-1.74.0 \
      /usr/lib/x86_64-linux-gnu/cmake/BoostDetectToolset-1.74.0.cmake "$lib/cmake/"
cp "$root/scripts/gpu-check.sh" "$out/"
corpus=${CORPUS:-$root/../shared/data/tinyshakespeare/input.txt}
if [ -f "$corpus" ]; then cp "$corpus" "$out/corpus.txt"; else
  # any few hundred KB of text will do for the smoke training
  for i in $(seq 1 400); do cat "$root/README.md"; done > "$out/corpus.txt"
fi
grep -qx '/.gpu-deps/' "$root/.git/info/exclude" 2>/dev/null || echo '/.gpu-deps/' >> "$root/.git/info/exclude"
echo "gpu-bundle: $(du -sh "$out" | cut -f1) in .gpu-deps/ (ignored by git); on the GPU machine run: bash .gpu-deps/gpu-check.sh"

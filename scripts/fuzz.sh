#!/usr/bin/env bash
# Builds DepthLab's libFuzzer targets with clang (ASan + UBSan) in build/fuzz and runs each for
# SECONDS (default 600) on its corpus under tests/fuzz/corpus/<target>/, keeping what it finds
# new there (minimised by libFuzzer's merge) and any crashing input under tests/fuzz/crashers/.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]   (targets: config safetensors checkpoint jsonl token_file)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}; shift || true
targets=("$@"); [ ${#targets[@]} -gt 0 ] || targets=(config safetensors checkpoint jsonl token_file)
b=build/fuzz
if [ ! -f "$b/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DDEPTHLAB_BUILD_FUZZERS=ON -DDEPTHLAB_BUILD_GUI=OFF -DDEPTHLAB_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$b" --target fuzz_make_seeds $(printf 'fuzz_%s ' "${targets[@]}")
root=tests/fuzz/corpus
mkdir -p "$root"/{config,safetensors,checkpoint,jsonl,token_file} tests/fuzz/crashers
[ -n "$(ls -A "$root/checkpoint")" ] || "$b/tests/fuzz/fuzz_make_seeds" "$root"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:allocator_may_return_null=1}
for t in "${targets[@]}"; do
  work=$(mktemp -d)
  echo "fuzz_$t: ${seconds}s"
  "$b/tests/fuzz/fuzz_$t" "$work" "$root/$t" -max_total_time="$seconds" -max_len=65536 \
    -rss_limit_mb=4096 -timeout=30 -artifact_prefix=tests/fuzz/crashers/"$t"- -print_final_stats=1 \
    2>"$b/fuzz_$t.log" || { echo "fuzz_$t FOUND A CRASH: see tests/fuzz/crashers/ and $b/fuzz_$t.log"; tail -30 "$b/fuzz_$t.log"; exit 1; }
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$b/fuzz_$t.log" | tr '\n' ' '; echo
  # keep a minimised corpus: the smallest set of old and new inputs with the same coverage
  min=$(mktemp -d)
  "$b/tests/fuzz/fuzz_$t" -merge=1 "$min" "$root/$t" "$work" 2>/dev/null >/dev/null \
    && [ -n "$(ls -A "$min")" ] && { rm -rf "${root:?}/$t"; mv "$min" "$root/$t"; } || rm -rf "$min"
  echo "  corpus: $(ls "$root/$t" | wc -l) inputs"
  rm -rf "$work"
done
echo "fuzz: ${#targets[@]} target(s) ran ${seconds}s each without a crash"

#!/usr/bin/env bash
# GPU diagnosis, run on the GPU machine from the project root after scripts/gpu-bundle.sh (like
# gpu-check.sh, whose build it reuses): profiles 2 training updates of DepthLab (CUDA kernels on)
# and of the Hugging Face baseline (eager and torch.compile) at a preset's shape and prints where
# the GPU time goes (bench/summarize_trace.py). With GTEST=1 it first runs test_gpu test by test
# and, when one crashes, prints cuda-gdb's backtrace. Knobs: PRESET, SCHEME, BUILD_DIR, GTEST.
set -uo pipefail
root=$(pwd); logs=${LOGDIR:-${OUT:-/tmp/depthlab-gpu-profile}}; mkdir -p "$logs"
b=${BUILD_DIR:-$root/build/gpu-check}; preset=${PRESET:-llama-130m}; scheme=${SCHEME:-pre_ln}
SKIP_TESTS=1 SKIP_HF=1 STEPS=1 TARGETS="depthlab-cli test_gpu" ONLY_BUILD=1 bash "$root/scripts/gpu-check.sh" || exit 1
if [ "${GTEST:-0}" = 1 ]; then
  timeout 120 "$b/tests/test_gpu" >"$logs/test_gpu.txt" 2>&1; rc=$?
  echo "test_gpu: exit $rc"; grep -E "^\[ RUN|OK \]|FAILED|Failure|error" "$logs/test_gpu.txt" | tail -12
  if [ $rc -gt 128 ] && command -v cuda-gdb >/dev/null; then
    timeout 150 cuda-gdb -batch -ex "set pagination off" -ex run -ex bt -ex "info threads" \
      --args "$b/tests/test_gpu" >"$logs/test_gpu-gdb.txt" 2>&1
    grep -E "^#|signal|SIG" "$logs/test_gpu-gdb.txt" | head -40
  fi
fi
trace=/tmp/depthlab-profile
timeout 200 "$b/app/depthlab-cli" bench train --device cuda --preset "$preset" --scheme "$scheme" \
  --steps 5 --no-hf --cuda-kernels --profile "$trace-depthlab.json" 2>&1 | grep -v "^\s*HF"
python3 "$root/bench/summarize_trace.py" "$trace-depthlab.json" --label "DepthLab $scheme, CUDA kernels"
PYTHONUNBUFFERED=1 timeout 300 python3 "$root/bench/hf_llama_bench.py" ${HF_ARGS:---steps 5 --accum 8} \
  --profile "$trace-hf"
for mode in eager compile; do
  [ -f "$trace-hf-$mode.json" ] && python3 "$root/bench/summarize_trace.py" "$trace-hf-$mode.json" --label "HF $mode"
done

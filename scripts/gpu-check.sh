#!/usr/bin/env bash
# The GPU check, run on a machine with an NVIDIA GPU, PyTorch (CUDA build) and nvcc, from the
# project root, after scripts/gpu-bundle.sh made .gpu-deps/ (no network or Debian -dev packages
# needed). About 5 minutes on an H200 (16 cores): builds DepthLab without the GUI against
# PyTorch's own LibTorch, runs the test binaries it built (the `gpu` tests as they are, with ATen
# ops instead of DepthLab's CUDA kernels, eager instead of CUDA graphs, and with RoPE's vector
# kernels; of test_core_store only the libstdc++ binding checks), benchmarks training at the
# LLaMA-130M shape against Hugging Face (eager and torch.compile): the default (kernels, residual
# adds fused into the norms, CUDA graphs), then one switch changed at a time (also eager against
# graphs on the small cpu-demo shape), times the probes on the GPU, and trains a short Pre-LN/LNS
# pair through the store (its throughput as the store recorded it). Summary on stdout; logs in $LOGDIR
# (default $OUT when set, else /tmp/depthlab-gpu-check).
# Knobs: STEPS (bench updates, 10), PRESET (llama-130m), CORPUS, BUILD_DIR, CMAKE_EXTRA,
# TARGETS (what to build: depthlab-cli test_gpu test_core_store; `all` for every test binary),
# SKIP_TESTS=1, SKIP_HF=1, ONLY_BUILD=1, TORCH_CUDA_ARCH_LIST (default: this GPU's).
set -uo pipefail
root=$(pwd); deps="$root/.gpu-deps"
logs=${LOGDIR:-${OUT:-/tmp/depthlab-gpu-check}}; b=${BUILD_DIR:-$root/build/gpu-check}
mkdir -p "$logs"
torch_dir=$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))') || { echo "no PyTorch"; exit 1; }
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))'
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null
arch=${TORCH_CUDA_ARCH_LIST:-$(python3 -c 'import torch; print("%d.%d" % torch.cuda.get_device_capability(0))')}
export CUDACXX=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
SECONDS=0
cmake -S "$root" -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDEPTHLAB_BUILD_GUI=OFF \
  -DCMAKE_PREFIX_PATH="$torch_dir/share/cmake;$torch_dir;$deps/prefix" -DTORCH_CUDA_ARCH_LIST="$arch" \
  -DSQLite3_INCLUDE_DIR="$deps/prefix/include" \
  -DSQLite3_LIBRARY="$deps/prefix/lib/x86_64-linux-gnu/libsqlite3.a" ${CMAKE_EXTRA:-} >"$logs/configure.txt" 2>&1 \
  || { tail -40 "$logs/configure.txt"; exit 1; }
grep -q "CUDA kernels on" "$logs/configure.txt" && echo "configure: DepthLab CUDA kernels on (arch $arch)"
targets=${TARGETS:-depthlab-cli test_gpu test_core_store}
cmake --build "$b" -j "$(nproc)" --target $targets >"$logs/build.txt" 2>&1 \
  || { grep -B2 -A6 'error' "$logs/build.txt" | head -80; exit 1; }
echo "build: ${SECONDS}s"
[ "${ONLY_BUILD:-0}" = 1 ] && exit 0
export TORCH_CPP_LOG_LEVEL=${TORCH_CPP_LOG_LEVEL:-ERROR}
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  for t in "$b"/tests/test_*; do
    [ -x "$t" ] && [ -f "$t" ] || continue
    filter=""; [ "$(basename "$t")" = test_core_store ] && filter="--gtest_filter=LibstdcxxBinding.*:RemoveTree.*"
    timeout 300 "$t" --gtest_brief=1 $filter >>"$logs/tests.txt" 2>&1; rc=$?
    echo "$(basename "$t") $filter: exit $rc$([ $rc -gt 128 ] && echo " (signal $((rc - 128)))")"
  done
  DEPTHLAB_CUDA_KERNELS=0 timeout 300 "$b/tests/test_gpu" --gtest_brief=1 >"$logs/tests-gpu-aten.txt" 2>&1
  echo "test_gpu with DEPTHLAB_CUDA_KERNELS=0 (ATen ops): exit $?"
  # every GPU test again with every trainer eager (CUDA graphs are the default)
  DEPTHLAB_CUDA_GRAPHS=0 timeout 300 "$b/tests/test_gpu" --gtest_brief=1 >"$logs/tests-gpu-eager.txt" 2>&1
  echo "test_gpu with DEPTHLAB_CUDA_GRAPHS=0 (eager): exit $?"
  # and with RoPE's 16-byte vector kernels (off by default until timed here)
  DEPTHLAB_CUDA_ROPE_VECTOR=1 timeout 300 "$b/tests/test_gpu" --gtest_brief=1 >"$logs/tests-gpu-rope.txt" 2>&1
  echo "test_gpu with DEPTHLAB_CUDA_ROPE_VECTOR=1: exit $?"
  grep -hE "FAILED|PASSED|SKIPPED|Skipped|needs|Failure|max diff|CUDA graphs turned off" "$logs/tests.txt" \
    "$logs/tests-gpu-aten.txt" "$logs/tests-gpu-eager.txt" "$logs/tests-gpu-rope.txt" | head -40
fi
cli="$b/app/depthlab-cli"; preset=${PRESET:-llama-130m}; steps=${STEPS:-10}
hf=(); [ "${SKIP_HF:-0}" = 1 ] && hf=(--no-hf)
bench() {  # scheme, then extra flags
  echo "--- bench train $*" | tee -a "$logs/bench-train.txt"
  timeout 300 "$cli" bench train --device cuda --preset "$preset" --steps "$steps" --scheme "$@" 2>&1 \
    | tee -a "$logs/bench-train.txt"
}
bench pre_ln "${hf[@]}"                                # the default (kernels + fused residual
bench lns --no-hf                                      # adds + CUDA graphs), and the HF baseline
bench pre_ln --no-hf --no-cuda-graphs                  # eager, kernel by kernel
DEPTHLAB_CUDA_ROPE_VECTOR=1 bench pre_ln --no-hf       # RoPE's 16-byte vector kernels
DEPTHLAB_CUDA_FUSED_RESIDUAL=0 bench pre_ln --no-hf    # DepthLab's kernels, residual adds apart
DEPTHLAB_CUDA_KERNELS=0 bench pre_ln --no-hf           # ATen ops
# A small model, where launching kernels bounds the step: eager, then CUDA graphs.
for g in --no-cuda-graphs --cuda-graphs; do
  echo "--- bench train --preset cpu-demo $g" | tee -a "$logs/bench-train.txt"
  timeout 300 "$cli" bench train --device cuda --preset cpu-demo --steps 50 --no-hf $g 2>&1 \
    | tee -a "$logs/bench-train.txt"
done
echo "--- bench probes"
timeout 300 "$cli" bench probes --device cuda --preset "$preset" 2>&1 | tee "$logs/bench-probes.txt"
corpus=${CORPUS:-$deps/corpus.txt}
if [ -f "$corpus" ]; then
  rm -f /tmp/depthlab-gpu.db*
  timeout 300 "$cli" --db /tmp/depthlab-gpu.db train --preset "$preset" --tokenizer byte \
    --scheme pre_ln,lns --steps 40 --device cuda --corpus "$corpus" \
    --checkpoint-dir /tmp/depthlab-gpu-ck >"$logs/train.txt" 2>&1; rc=$?; echo "train: exit $rc"
  tr '\r' '\n' <"$logs/train.txt" | tail -4
  "$cli" --db /tmp/depthlab-gpu.db report --runs 1,2 2>&1 | head -14
  # what the run loop achieved (the last logged tokens/s, the micro-batch it chose, its checkpoints)
  for r in 1 2; do
    "$cli" --db /tmp/depthlab-gpu.db runs show $r 2>&1 | grep -oE "^run .*|tokens_per_s .*|\"batchSize\":[0-9]+|\"gradAccum\":[0-9]+|created .*|checkpoint step .*"
  done
fi
echo "total: ${SECONDS}s; logs in $logs"

#!/usr/bin/env bash
# Makes sure PyTorch's own LibTorch (2.x, the CUDA build from the Python package index) is
# installed in DepthLab's private virtual environment (with Hugging Face's transformers,
# safetensors and tokenizers: the import/export tests and tokenizer.json models use them; and
# accelerate (the Trainer example), tensorboard (the TensorBoard tests read and write event
# files with it), weightwatcher (the weight-spectra parity test), tuned-lens (the tuned-lens
# parity test; without its dependencies: wandb, datasets and plotly serve only its training
# script, which the test does not run), lm-eval (the task-accuracy parity test) and pytest for the
# Python package's tests), and
# prints the folder of the `torch` package (its C++ headers, libraries and CMake config live
# under it) as the last line.
# Never touches the system Python: the environment lives in the user's cache
# (${XDG_CACHE_HOME:-~/.cache}/depthlab/torch2-<version>), shared by every checkout, so a clean
# clone (CI) does not download the ~4.5 GB again. Set LIBTORCH_DIR to an unpacked LibTorch to
# skip all of this and use that instead. Installs python3-venv from Debian when missing.
# Does not build anything.
set -euo pipefail

if [ -n "${LIBTORCH_DIR:-}" ]; then
  [ -f "$LIBTORCH_DIR/share/cmake/Torch/TorchConfig.cmake" ] || {
    echo "torch2-env: LIBTORCH_DIR=$LIBTORCH_DIR has no share/cmake/Torch/TorchConfig.cmake" >&2; exit 1; }
  echo "$LIBTORCH_DIR"
  exit 0
fi

version=${DEPTHLAB_TORCH2_VERSION:-2.11.0}   # the PyTorch of the lab's H200 checks (CUDA 13.0)
venv=${DEPTHLAB_TORCH2_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/depthlab/torch2-$version}
python=${DEPTHLAB_TORCH2_PYTHON:-python3}

installed() {
  [ -x "$venv/bin/python" ] &&
    "$venv/bin/python" -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '$version')" \
      2>/dev/null
}

if ! installed; then
  if ! "$python" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    echo "torch2-env: $python cannot make virtual environments; installing python3-venv" >&2
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-venv >&2
  fi
  # Only ever delete a folder this script made (it leaves a marker in each), an empty one, or
  # the default one in DepthLab's cache: DEPTHLAB_TORCH2_VENV may name anything.
  marker="$venv/.made-by-depthlab-torch2-env"
  default_venv=${XDG_CACHE_HOME:-$HOME/.cache}/depthlab/torch2-$version
  if [ -e "$venv" ] || [ -L "$venv" ]; then
    if [ -d "$venv" ] && [ ! -L "$venv" ] &&
       { [ -f "$marker" ] || [ -z "$(ls -A "$venv")" ] ||
         { [ "$venv" = "$default_venv" ] && [ -f "$venv/pyvenv.cfg" ]; }; }; then
      rm -rf "$venv"
    else
      echo "torch2-env: $venv exists and was not made by this script (no $marker);" \
        "not deleting it: remove it yourself or point DEPTHLAB_TORCH2_VENV at a new folder" >&2
      exit 1
    fi
  fi
  echo "torch2-env: installing torch==$version into $venv (about 4.5 GB, once)" >&2
  SECONDS=0
  mkdir -p "$(dirname "$venv")"
  "$python" -m venv "$venv" >&2
  touch "$marker"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-compile \
    "torch==$version" >&2
  echo "torch2-env: torch $version installed in ${SECONDS}s" >&2
fi

if ! "$venv/bin/python" -c 'import transformers, safetensors, tokenizers, pytest, accelerate, tensorboard, weightwatcher' >/dev/null 2>&1; then
  echo "torch2-env: installing transformers, safetensors, tokenizers, accelerate, tensorboard, weightwatcher and pytest into $venv" >&2
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-compile \
    "transformers>=4.45" safetensors tokenizers "accelerate>=1.1" tensorboard weightwatcher pytest >&2 ||
    echo "torch2-env: could not install transformers; the Hugging Face tests will skip" >&2
fi
if ! "$venv/bin/python" -c 'import lm_eval' >/dev/null 2>&1; then
  echo "torch2-env: installing lm-eval into $venv" >&2
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-compile \
    "lm-eval>=0.4.13,<0.5" >&2 ||
    echo "torch2-env: could not install lm-eval; its parity test will skip" >&2
fi
if ! "$venv/bin/python" -c 'import tuned_lens' >/dev/null 2>&1; then
  echo "torch2-env: installing tuned-lens (without its dependencies) into $venv" >&2
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-compile --no-deps \
    "tuned-lens==0.2.0" >&2 ||
    echo "torch2-env: could not install tuned-lens; its parity test will skip" >&2
fi

"$venv/bin/python" -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>/dev/null

#!/usr/bin/env bash
# Installs the `depthlab` Python package (python/: depthlab.watch and the binding of the C++
# core) into the environment of the Python given as $1, built against the torch installed there
# (pip install --no-build-isolation ./python, with scikit-build-core). Refuses a Python that is
# not in a virtual (or conda) environment: the system Python is never touched. Does not install
# torch: the user's own is what the package binds.
set -euo pipefail
python=${1:-python3}
cd "$(dirname "$0")/.."
if ! "$python" -c 'import sys; sys.exit(sys.prefix == sys.base_prefix and "CONDA_PREFIX" not in __import__("os").environ)'; then
  echo "python-install: $python is not in a virtual environment; make one (python3 -m venv ENV)" \
    "and run: make python-install PYTHON=ENV/bin/python" >&2
  exit 1
fi
if ! "$python" -c 'import torch' 2>/dev/null; then
  echo "python-install: $python has no torch; install PyTorch there first (pip install torch)" >&2
  exit 1
fi
"$python" -m pip install -q --disable-pip-version-check "scikit-build-core>=0.9"
echo "python-install: building the core against $("$python" -c 'import torch; print("torch", torch.__version__)') (several minutes on 2 cores)" >&2
"$python" -m pip install --disable-pip-version-check --no-build-isolation ./python
"$python" -c 'import depthlab; print("python-install: depthlab", depthlab.__version__, "installed; the store:", depthlab.default_store_path())'

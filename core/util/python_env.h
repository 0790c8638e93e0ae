// Finding a Python interpreter for the work DepthLab hands to Python out of process (the
// reference timings, Hugging Face's `tokenizers`, the transformers parity tests). Never installs
// anything; the project-local environment is made by scripts/torch2-env.sh.
#pragma once

#include <string>

namespace depthlab::util {

/// The python of the newest torch2 environment ($DEPTHLAB_TORCH2_VENV, else the highest
/// version under ${XDG_CACHE_HOME:-~/.cache}/depthlab/torch2-*); "" when there is none.
std::string newestTorchPython();

/// The first interpreter that can `import module`: $DEPTHLAB_PYTHON, the torch2 environment's,
/// python3 on PATH, /usr/bin/python3; "" when none can. Results are cached per module.
std::string pythonWithModule(const std::string& module);

}  // namespace depthlab::util

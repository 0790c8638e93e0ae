// Small random Hugging Face models made once by tests/python/hf_models.py (transformers in the
// torch2 environment, or $DEPTHLAB_PYTHON) and shared by every test process through a folder
// keyed by the script's content; tests skip, saying why, when no Python has transformers.
#pragma once

#include <string>

namespace depthlab::test {

/// "" when a Python with transformers, safetensors and torch exists, else why not.
std::string transformersMissingReason();
/// The Python that has them.
std::string transformersPython();
/// The folder holding llama-f32, llama-bf16-sharded, mistral-f32, qwen2-f32, qwen2-bf16-sharded,
/// llama-{llama3,linear,dynamic}-f32, qwen2-yarn-f32, qwen3-f32, qwen3-bf16-sharded, olmo2-f32,
/// olmo2-bf16-sharded, phi3-f32, phi3-longrope-f32, gemma2-f32, gemma2-bf16-sharded, gemma3-f32,
/// gemma3-bf16-sharded,
/// llama-bytes (vocabulary 256)
/// (each with reference.safetensors: `ids` (2, 12) and transformers' float32 `logits`).
std::string hfModelSet();
/// Runs tests/python/hf_models.py with `args`; returns its exit code, output in `out`.
int runHfScript(const std::string& args, std::string* out);

}  // namespace depthlab::test

// Fetching one revision of a Hugging Face hub repository (`import-hf --series --hub REPO
// --revisions step0,step1000,...`) into a folder (and deleting it again), through Python's
// huggingface_hub out of process (the lab links no HTTP client): config.json, the safetensors
// weights, the tokenizer files. A revision that holds only PyTorch's pytorch_model*.bin (Pythia's
// step branches) is converted to safetensors there, with the interpreter's torch and safetensors.
// No network, no huggingface_hub, an unknown repository or revision: HfModelError saying which.
#pragma once

#include <string>

namespace depthlab::hf {

/// Where a revision is downloaded by default: ${XDG_CACHE_HOME:-~/.cache}/depthlab/hub/
/// <owner>--<name>/<revision> (the folder's name is the revision, which tells the step).
std::string defaultHubFolder(const std::string& repo, const std::string& revision);

/// Downloads `revision` of `repo` into Hugging Face's cache and links its files into `dest`
/// (created; converted weights are written there); a folder a finished fetch left (its marker
/// file present) is kept as it is. Throws HfModelError.
void fetchHubRevision(const std::string& repo, const std::string& revision,
                      const std::string& dest);

/// Deletes `dest` and, when fetchHubRevision made it, that revision's files from the Hugging
/// Face cache (blobs other revisions share stay). Throws HfModelError.
void forgetHubRevision(const std::string& dest);

}  // namespace depthlab::hf

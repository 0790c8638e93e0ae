// Safetensors files (the Hugging Face format): an 8-byte little-endian header length, a JSON
// header {name: {dtype, shape, data_offsets}}, then raw little-endian tensor bytes.
// Whole-file save and load (copies) for small files: parity tests, exports. Loading validates
// every offset and shape before touching data (io/safetensors_archive.h maps large files).
// Saving writes a temporary file beside the target and renames it into place (mode 0644).
#pragma once

#include <torch/torch.h>

#include <map>
#include <stdexcept>
#include <string>

namespace depthlab::io {

class SafetensorsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void saveSafetensors(const std::string& path, const std::map<std::string, torch::Tensor>& tensors,
                     const std::map<std::string, std::string>& metadata = {});
std::map<std::string, torch::Tensor> loadSafetensors(const std::string& path);

/// Every named parameter of a module (model->named_parameters()), detached, on CPU.
std::map<std::string, torch::Tensor> namedTensors(const torch::nn::Module& module);
/// Copies tensors into a module's parameters by name; throws on a missing name or a shape
/// mismatch, names the offender.
void assignParameters(torch::nn::Module& module, const std::map<std::string, torch::Tensor>& t);

}  // namespace depthlab::io

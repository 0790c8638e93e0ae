// Safetensors reader/writer; see safetensors.h.
#include "io/safetensors.h"

#include "io/safetensors_archive.h"

#include <nlohmann/json.hpp>

#include <fstream>

namespace depthlab::io {

void saveSafetensors(const std::string& path, const std::map<std::string, torch::Tensor>& tensors,
                     const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<torch::Tensor> ordered;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    auto c = t.detach().to(torch::kCPU).contiguous();
    const uint64_t bytes = static_cast<uint64_t>(c.numel()) * c.element_size();
    header[name] = {{"dtype", safetensorsDtypeName(c.scalar_type())},
                    {"shape", c.sizes().vec()},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    ordered.push_back(c);
  }
  std::string h = header.dump();
  while (h.size() % 8 != 0) h += ' ';
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  const uint64_t n = h.size();
  out.write(reinterpret_cast<const char*>(&n), 8);
  out.write(h.data(), static_cast<std::streamsize>(h.size()));
  for (const auto& c : ordered) {
    out.write(static_cast<const char*>(c.data_ptr()),
              static_cast<std::streamsize>(c.numel() * c.element_size()));
  }
  if (!out) throw SafetensorsError("cannot write '" + path + "'");
}

std::map<std::string, torch::Tensor> loadSafetensors(const std::string& path) {
  const auto archive = SafetensorsArchive::openFile(path);
  std::map<std::string, torch::Tensor> out;
  for (const auto& [name, entry] : archive.entries()) out[name] = archive.tensor(name).clone();
  return out;
}

std::map<std::string, torch::Tensor> namedTensors(const torch::nn::Module& module) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& p : module.named_parameters()) out[p.key()] = p.value().detach().to(torch::kCPU);
  return out;
}

void assignParameters(torch::nn::Module& module, const std::map<std::string, torch::Tensor>& t) {
  torch::NoGradGuard ng;
  for (auto& p : module.named_parameters()) {
    auto it = t.find(p.key());
    if (it == t.end()) throw SafetensorsError("missing tensor '" + p.key() + "'");
    if (it->second.sizes() != p.value().sizes()) {
      throw SafetensorsError("tensor '" + p.key() + "' has shape " +
                             c10::str(it->second.sizes()) + ", the model expects " +
                             c10::str(p.value().sizes()));
    }
    p.value().copy_(it->second.to(p.value().dtype()));
  }
}

}  // namespace depthlab::io

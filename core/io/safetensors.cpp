// Safetensors reader/writer; see safetensors.h.
#include "io/safetensors.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <sstream>

namespace depthlab::io {

namespace {

struct DtypeName { torch::ScalarType type; const char* name; };
constexpr DtypeName kDtypes[] = {
    {torch::kFloat32, "F32"}, {torch::kFloat64, "F64"}, {torch::kFloat16, "F16"},
    {torch::kBFloat16, "BF16"}, {torch::kInt64, "I64"}, {torch::kInt32, "I32"},
    {torch::kInt16, "I16"}, {torch::kInt8, "I8"}, {torch::kUInt8, "U8"}, {torch::kBool, "BOOL"}};

const char* dtypeName(torch::ScalarType t) {
  for (const auto& d : kDtypes) {
    if (d.type == t) return d.name;
  }
  throw SafetensorsError(std::string("safetensors: unsupported dtype ") + c10::toString(t));
}

torch::ScalarType dtypeFromName(const std::string& n, const std::string& path) {
  for (const auto& d : kDtypes) {
    if (n == d.name) return d.type;
  }
  throw SafetensorsError("'" + path + "': unsupported dtype '" + n + "'");
}

}  // namespace

void saveSafetensors(const std::string& path, const std::map<std::string, torch::Tensor>& tensors,
                     const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<torch::Tensor> ordered;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    auto c = t.detach().to(torch::kCPU).contiguous();
    const uint64_t bytes = static_cast<uint64_t>(c.numel()) * c.element_size();
    header[name] = {{"dtype", dtypeName(c.scalar_type())},
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
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SafetensorsError("cannot read '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string bytes = ss.str();
  if (bytes.size() < 8) throw SafetensorsError("'" + path + "' is too short for safetensors");
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  if (n > bytes.size() - 8 || n > (100u << 20)) {
    throw SafetensorsError("'" + path + "': header length " + std::to_string(n) + " is invalid");
  }
  auto header = nlohmann::json::parse(bytes.substr(8, n), nullptr, false);
  if (header.is_discarded() || !header.is_object()) {
    throw SafetensorsError("'" + path + "': header is not a JSON object");
  }
  const uint64_t dataStart = 8 + n, dataLen = bytes.size() - dataStart;
  std::map<std::string, torch::Tensor> out;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const auto& e = it.value();
    try {
      auto type = dtypeFromName(e.at("dtype").get<std::string>(), path);
      auto shape = e.at("shape").get<std::vector<int64_t>>();
      auto offs = e.at("data_offsets").get<std::vector<uint64_t>>();
      int64_t numel = 1;
      for (int64_t s : shape) {
        if (s < 0 || (s > 0 && numel > (int64_t{1} << 40) / s)) throw SafetensorsError("shape");
        numel *= s;
      }
      const uint64_t need = static_cast<uint64_t>(numel) * c10::elementSize(type);
      if (offs.size() != 2 || offs[0] > offs[1] || offs[1] > dataLen || offs[1] - offs[0] != need) {
        throw SafetensorsError("offsets");
      }
      auto t = torch::empty(shape, torch::TensorOptions().dtype(type));
      if (need) std::memcpy(t.data_ptr(), bytes.data() + dataStart + offs[0], need);
      out[it.key()] = t;
    } catch (const SafetensorsError& err) {
      throw SafetensorsError("'" + path + "': tensor '" + it.key() + "' has a bad " + err.what());
    } catch (const nlohmann::json::exception&) {
      throw SafetensorsError("'" + path + "': tensor '" + it.key() + "' has a malformed entry");
    }
  }
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

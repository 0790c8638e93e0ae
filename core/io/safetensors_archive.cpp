// Memory-mapped, validated safetensors files and sharded model folders; see safetensors_archive.h.
#include "io/safetensors_archive.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "data/corpus.h"
#include "data/mapped_file.h"

namespace depthlab::io {

namespace fs = std::filesystem;

namespace {

struct DtypeName { torch::ScalarType type; const char* name; };
constexpr DtypeName kDtypes[] = {
    {torch::kFloat32, "F32"}, {torch::kFloat64, "F64"}, {torch::kFloat16, "F16"},
    {torch::kBFloat16, "BF16"}, {torch::kInt64, "I64"}, {torch::kInt32, "I32"},
    {torch::kInt16, "I16"}, {torch::kInt8, "I8"}, {torch::kUInt8, "U8"}, {torch::kBool, "BOOL"}};

constexpr uint64_t kMaxHeader = 100ull << 20;  // the format's own limit

}  // namespace

torch::ScalarType safetensorsDtype(const std::string& name, const std::string& where) {
  for (const auto& d : kDtypes) {
    if (name == d.name) return d.type;
  }
  throw SafetensorsError(where + ": unsupported dtype '" + name + "'");
}

const char* safetensorsDtypeName(torch::ScalarType t) {
  for (const auto& d : kDtypes) {
    if (d.type == t) return d.name;
  }
  throw SafetensorsError(std::string("safetensors: unsupported dtype ") + c10::toString(t));
}

SafetensorsArchive SafetensorsArchive::openFile(const std::string& path) {
  SafetensorsArchive a;
  a.addFile(path);
  return a;
}

SafetensorsArchive SafetensorsArchive::openFolder(const std::string& dir) {
  const fs::path single = fs::path(dir) / "model.safetensors";
  const fs::path index = fs::path(dir) / "model.safetensors.index.json";
  std::error_code ec;
  if (fs::is_regular_file(single, ec)) return openFile(single.string());
  if (!fs::is_regular_file(index, ec)) {
    throw SafetensorsError("'" + dir + "' has neither model.safetensors nor " +
                           "model.safetensors.index.json");
  }
  std::ifstream in(index);
  auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("weight_map") ||
      !j["weight_map"].is_object()) {
    throw SafetensorsError("'" + index.string() + "' is not an index (no \"weight_map\" object)");
  }
  SafetensorsArchive a;
  std::map<std::string, std::string> wanted;  // tensor -> shard path
  for (auto it = j["weight_map"].begin(); it != j["weight_map"].end(); ++it) {
    if (!it.value().is_string()) {
      throw SafetensorsError("'" + index.string() + "': the shard of '" + it.key() +
                             "' is not a file name");
    }
    const std::string shard = it.value().get<std::string>();
    if (shard.empty() || shard.find('/') != std::string::npos || shard == "." || shard == "..") {
      throw SafetensorsError("'" + index.string() + "': shard name '" + shard +
                             "' must be a file name in the model folder");
    }
    const std::string path = (fs::path(dir) / shard).string();
    if (!a.m_files.count(path)) {
      if (!fs::is_regular_file(path, ec)) {
        throw SafetensorsError("missing shard '" + shard + "' (listed in " +
                               index.filename().string() + " for tensor '" + it.key() + "')");
      }
      a.addFile(path);
    }
    wanted[it.key()] = path;
  }
  if (wanted.empty()) throw SafetensorsError("'" + index.string() + "' lists no tensors");
  for (const auto& [name, path] : wanted) {
    auto e = a.m_entries.find(name);
    if (e == a.m_entries.end() || e->second.file != path) {
      throw SafetensorsError("tensor '" + name + "' is not in shard '" +
                             fs::path(path).filename().string() + "' as the index says");
    }
  }
  return a;
}

void SafetensorsArchive::addFile(const std::string& path) {
  std::shared_ptr<data::MappedFile> file;
  try {
    file = std::make_shared<data::MappedFile>(path);
  } catch (const data::DataError& e) {
    throw SafetensorsError(e.what());
  }
  const unsigned char* bytes = file->data();
  const uint64_t size = file->size();
  if (size < 8) throw SafetensorsError("'" + path + "' is too short for safetensors");
  uint64_t n;
  std::memcpy(&n, bytes, 8);
  if (n > size - 8 || n > kMaxHeader) {
    throw SafetensorsError("'" + path + "': header length " + std::to_string(n) +
                           " is invalid for a file of " + std::to_string(size) + " bytes");
  }
  auto header = nlohmann::json::parse(bytes + 8, bytes + 8 + n, nullptr, false);
  if (header.is_discarded() || !header.is_object()) {
    throw SafetensorsError("'" + path + "': header is not a JSON object");
  }
  const uint64_t dataStart = 8 + n, dataLen = size - dataStart;
  std::vector<std::pair<std::pair<uint64_t, uint64_t>, std::string>> ranges;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (m_metadata.empty() && it.value().is_object()) {
        for (auto m = it.value().begin(); m != it.value().end(); ++m) {
          if (m.value().is_string()) m_metadata[m.key()] = m.value().get<std::string>();
        }
      }
      continue;
    }
    const std::string where = "'" + path + "': tensor '" + it.key() + "'";
    const auto& e = it.value();
    TensorEntry t;
    t.file = path;
    try {
      t.dtype = safetensorsDtype(e.at("dtype").get<std::string>(), where);
      t.shape = e.at("shape").get<std::vector<int64_t>>();
      const auto offs = e.at("data_offsets").get<std::vector<uint64_t>>();
      int64_t numel = 1;
      for (int64_t s : t.shape) {
        if (s < 0 || (s > 0 && numel > (int64_t{1} << 40) / s)) {
          throw SafetensorsError(where + " has a bad shape");
        }
        numel *= s;
      }
      const uint64_t need = static_cast<uint64_t>(numel) * c10::elementSize(t.dtype);
      if (offs.size() != 2 || offs[0] > offs[1] || offs[1] > dataLen) {
        throw SafetensorsError(where + " has byte offsets outside the file's " +
                               std::to_string(dataLen) + " data bytes");
      }
      if (offs[1] - offs[0] != need) {
        throw SafetensorsError(where + " has " + std::to_string(offs[1] - offs[0]) +
                               " bytes for a shape that needs " + std::to_string(need));
      }
      t.offset = dataStart + offs[0];
      t.bytes = need;
      if (need) ranges.push_back({{offs[0], offs[1]}, it.key()});
    } catch (const nlohmann::json::exception&) {
      throw SafetensorsError(where + " has a malformed entry");
    }
    if (m_entries.count(it.key())) {
      throw SafetensorsError(where + " appears in more than one file");
    }
    m_entries[it.key()] = std::move(t);
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].first.first < ranges[i - 1].first.second) {
      throw SafetensorsError("'" + path + "': tensors '" + ranges[i - 1].second + "' and '" +
                             ranges[i].second + "' overlap");
    }
  }
  m_files[path] = std::move(file);
  m_fileOrder.push_back(path);
}

torch::Tensor SafetensorsArchive::tensor(const std::string& name) const {
  auto it = m_entries.find(name);
  if (it == m_entries.end()) throw SafetensorsError("no tensor '" + name + "'");
  const TensorEntry& e = it->second;
  const auto opts = torch::TensorOptions().dtype(e.dtype);
  if (e.bytes == 0) return torch::empty(e.shape, opts);
  std::shared_ptr<data::MappedFile> keep = m_files.at(e.file);
  void* p = const_cast<unsigned char*>(keep->data() + e.offset);
  if (reinterpret_cast<uintptr_t>(p) % c10::elementSize(e.dtype) != 0) {
    auto out = torch::empty(e.shape, opts);
    std::memcpy(out.data_ptr(), p, e.bytes);
    return out;
  }
  return torch::from_blob(p, e.shape, [keep](void*) {}, opts);
}

}  // namespace depthlab::io

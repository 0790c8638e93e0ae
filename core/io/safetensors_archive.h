// SafetensorsArchive: the tensors of one .safetensors file or of a Hugging Face model folder
// (model.safetensors, or the shards named by model.safetensors.index.json), memory-mapped and
// validated before any tensor byte is read: header length and JSON, supported dtypes, shapes
// that match the byte ranges, ranges inside the file and not overlapping, shards that exist and
// hold what the index says. A tensor is a read-only view of the mapping (a copy only when its
// bytes are misaligned for its dtype); the mapping lives as long as any view of it. Nothing is
// converted here (dtype stays as stored) and nothing is written.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "io/safetensors.h"

namespace depthlab::data {
class MappedFile;
}

namespace depthlab::io {

struct TensorEntry {
  std::string file;             // path of the file holding it
  torch::ScalarType dtype = torch::kFloat32;
  std::vector<int64_t> shape;
  uint64_t offset = 0, bytes = 0;  // absolute byte range within the file
};

class SafetensorsArchive {
 public:
  /// One .safetensors file.
  static SafetensorsArchive openFile(const std::string& path);
  /// A model folder: model.safetensors, else model.safetensors.index.json and its shards.
  static SafetensorsArchive openFolder(const std::string& dir);

  const std::map<std::string, TensorEntry>& entries() const { return m_entries; }
  bool contains(const std::string& name) const { return m_entries.count(name) != 0; }
  /// The files read, in order (one, or the shards).
  const std::vector<std::string>& files() const { return m_fileOrder; }
  /// Metadata of the (first) file's header ("__metadata__"), empty when none.
  const std::map<std::string, std::string>& metadata() const { return m_metadata; }
  /// A CPU tensor over the mapped bytes (do not write to it); throws SafetensorsError naming
  /// the tensor when it is absent.
  torch::Tensor tensor(const std::string& name) const;

 private:
  void addFile(const std::string& path);
  std::map<std::string, std::shared_ptr<data::MappedFile>> m_files;
  std::vector<std::string> m_fileOrder;
  std::map<std::string, TensorEntry> m_entries;
  std::map<std::string, std::string> m_metadata;
};

/// The dtype of a safetensors dtype name ("F32", "BF16", ...); throws naming it when unknown.
torch::ScalarType safetensorsDtype(const std::string& name, const std::string& where);
/// The safetensors name of a dtype; throws when the format has none.
const char* safetensorsDtypeName(torch::ScalarType t);

}  // namespace depthlab::io

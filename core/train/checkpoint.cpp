// See checkpoint.h. The version-2 format lives in checkpoint_stream.cpp, version 1 in
// checkpoint_v1.cpp; this file opens a file, dispatches on its version and checks ownership.
#include "train/checkpoint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <optional>

#include "train/checkpoint_stream.h"
#include "train/checkpoint_tensors.h"
#include "train/checkpoint_v1.h"
#include "util/content_hash.h"

namespace depthlab::train {

namespace {

constexpr char kMagic[8] = {'D', 'L', 'C', 'K', 'P', 'T', '\0', '\1'};

// An open checkpoint: its version, and for version 2 the reader past its header.
struct OpenFile {
  int fd = -1;
  uint32_t version = 0;
  std::optional<CheckpointFileReader> reader;
  ~OpenFile() {
    if (fd >= 0) ::close(fd);
  }
};

void open(OpenFile& f, const std::string& path) {
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) {
    throw CheckpointError("cannot read checkpoint '" + path + "': " + std::strerror(errno));
  }
  struct stat st {};
  char lead[12];
  if (::fstat(f.fd, &st) != 0 || ::pread(f.fd, lead, 12, 0) != 12 ||
      std::memcmp(lead, kMagic, 8) != 0) {
    throw CheckpointError("'" + path + "' is not a DepthLab checkpoint.");
  }
  std::memcpy(&f.version, lead + 8, 4);
  if (f.version == 1) return;
  if (f.version != kCheckpointVersion) {
    throw CheckpointError("checkpoint '" + path + "' has format version " +
                          std::to_string(f.version) + "; this build reads versions 1 and " +
                          std::to_string(kCheckpointVersion) + ".");
  }
  f.reader.emplace(path, f.fd, static_cast<uint64_t>(st.st_size));
}

CheckpointMeta metaOf(OpenFile& f, const std::string& path) {
  if (f.version == 1) return v1::readMeta(path);
  CheckpointMeta m = checkpointMetaFromJson(f.reader->header(), path);
  m.checksum = util::hex64(f.reader->storedChecksum());
  return m;
}

// Every destination tensor by its record name; refuses a file that does not fit before anything
// is read into the model or the optimizer.
std::map<std::string, torch::Tensor> destinations(const CheckpointFileReader& r,
                                                  model::Decoder& model,
                                                  torch::optim::Optimizer* optimizer,
                                                  const std::string& path) {
  auto refuse = [&](const std::string& why) {
    throw CheckpointError("checkpoint '" + path + "' does not fit this model (" + why + ")");
  };
  std::map<std::string, torch::Tensor> out;
  for (auto& nt : modelTensors(model)) out[nt.name] = nt.tensor;
  std::map<std::string, const TensorRecord*> inFile;
  for (const auto& rec : r.records()) inFile[rec.name] = &rec;
  for (const auto& [name, t] : out) {
    auto it = inFile.find(name);
    if (it == inFile.end()) refuse("the file has no " + name.substr(6));
    if (t.sizes().vec() != it->second->shape) {
      refuse(name.substr(6) + " is " + c10::str(c10::IntArrayRef(it->second->shape)) +
             " in the file, " + c10::str(t.sizes()) + " in the model");
    }
  }
  for (const auto& rec : r.records()) {
    if (rec.name.rfind("model/", 0) == 0 && !out.count(rec.name)) {
      refuse("the model has no " + rec.name.substr(6));
    }
  }
  const auto& header = r.header();
  if (optimizer && header.contains("optimizer") && header["optimizer"].is_object()) {
    for (auto& nt : prepareOptimizerState(*optimizer, header["optimizer"])) {
      auto it = inFile.find(nt.name);
      if (it == inFile.end() || it->second->shape != nt.tensor.sizes().vec()) {
        refuse("optimizer state " + nt.name + " is missing or of another shape");
      }
      out[nt.name] = nt.tensor;
    }
  }
  return out;
}

}  // namespace

CheckpointMeta checkpointMetaFromJson(const nlohmann::json& j, const std::string& path) {
  CheckpointMeta m;
  try {  // fields of the wrong type are as unreadable as broken JSON
    m.step = j.value("step", int64_t{0});
    m.scheme = j.value("scheme", std::string());
    m.runId = j.value("run_id", int64_t{0});
    m.config = j.value("config", nlohmann::json::object());
    m.storeId = j.value("store_id", std::string());
    m.configHash = j.value("config_hash", std::string());
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError("checkpoint '" + path + "' has an unreadable header (" + e.what() + ")");
  }
  if (m.configHash.empty()) m.configHash = modelConfigHash(m.config);  // older files
  return m;
}

std::string saveCheckpoint(const std::string& path, model::Decoder& model,
                           torch::optim::Optimizer* optimizer, const CheckpointMeta& meta) {
  nlohmann::json header = {
      {"step", meta.step},
      {"scheme", meta.scheme},
      {"run_id", meta.runId},
      {"config", meta.config},
      {"store_id", meta.storeId},
      {"config_hash", meta.configHash.empty() ? modelConfigHash(meta.config) : meta.configHash}};
  std::vector<NamedTensor> tensors = modelTensors(model);
  if (optimizer) {
    OptimizerSnapshot s = optimizerSnapshot(*optimizer);
    header["optimizer"] = std::move(s.json);
    for (auto& nt : s.tensors) tensors.push_back(std::move(nt));
  }
  return util::hex64(writeCheckpointFile(path, std::move(header), tensors));
}

CheckpointMeta readCheckpointMeta(const std::string& path) {
  OpenFile f;
  open(f, path);
  return metaOf(f, path);
}

std::string modelConfigHash(const nlohmann::json& config) {
  const auto empty = nlohmann::json::object();
  const auto& c = config.is_object() ? config : empty;
  nlohmann::json shape = {{"model", c.value("model", empty)},
                          {"options", c.value("options", empty)}};
  // Fields added later hash as before while they keep their defaults (older runs' checkpoints
  // still verify): grouped-query attention, head dim, q/k/v biases, tied embeddings.
  auto& m = shape["model"];
  if (m.is_object()) {
    for (const char* key : {"nKvHeads", "headDim"}) {
      if (m.contains(key) && m[key] == 0) m.erase(key);
    }
    for (const char* key : {"qkvBias", "tieEmbeddings"}) {
      if (m.contains(key) && m[key] == false) m.erase(key);
    }
  }
  return util::hex64(util::fnv1a(shape.dump()));
}

namespace {

CheckpointMeta checkOwner(const CheckpointMeta& m, const std::string& path,
                          const CheckpointOwner& owner) {
  auto refuse = [&](const std::string& what, const std::string& expected,
                    const std::string& found) {
    throw CheckpointError("checkpoint '" + path + "' does not belong to run " +
                          std::to_string(owner.runId) + ": " + what + " is " + found +
                          " in the file, " + expected + " in the database");
  };
  if (!owner.checksum.empty() && owner.checksum != m.checksum) {
    refuse("the checksum", owner.checksum, m.checksum + " (the file was replaced or modified)");
  }
  if (owner.runId != 0 && m.runId != owner.runId) {
    refuse("the run id", std::to_string(owner.runId), std::to_string(m.runId));
  }
  if (!owner.scheme.empty() && m.scheme != owner.scheme)
    refuse("the scheme", owner.scheme, m.scheme);
  if (!owner.storeId.empty() && !m.storeId.empty() && m.storeId != owner.storeId) {
    refuse("the database id", owner.storeId, m.storeId + " (another database's run)");
  }
  if (!owner.configHash.empty() && m.configHash != owner.configHash) {
    refuse("the model config hash", owner.configHash,
           m.configHash.empty() ? "absent" : m.configHash);
  }
  return m;
}

}  // namespace

CheckpointMeta checkCheckpointOwner(const std::string& path, const CheckpointOwner& owner) {
  return checkOwner(readCheckpointMeta(path), path, owner);
}

CheckpointMeta verifyCheckpoint(const std::string& path, const CheckpointOwner& owner) {
  OpenFile f;
  open(f, path);
  CheckpointMeta m = checkOwner(metaOf(f, path), path, owner);
  if (f.reader) f.reader->readAll([](const TensorRecord&) { return torch::Tensor(); });
  return m;
}

CheckpointMeta loadCheckpoint(const std::string& path, model::Decoder& model,
                              torch::optim::Optimizer* optimizer, torch::Device device) {
  OpenFile f;
  open(f, path);
  if (f.version == 1) return v1::load(path, model, optimizer, device);
  CheckpointMeta m = metaOf(f, path);
  auto dest = destinations(*f.reader, model, optimizer, path);
  try {
    f.reader->readAll([&](const TensorRecord& r) {
      auto it = dest.find(r.name);
      return it == dest.end() ? torch::Tensor() : it->second;
    });
  } catch (const c10::Error& e) {
    throw CheckpointError("checkpoint '" + path + "' could not be loaded (" +
                          std::string(e.what_without_backtrace()) + ")");
  }
  return m;
}

}  // namespace depthlab::train

// Checkpoint file format (little-endian):
//   "DLCKPT\0\1" | u32 version | u64 n | meta JSON (n bytes) | u64 n | model archive |
//   u64 n | optimizer archive (n may be 0) | u64 FNV-1a of everything before it
#include "train/checkpoint.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/content_hash.h"

namespace depthlab::train {

namespace {

constexpr char kMagic[8] = {'D', 'L', 'C', 'K', 'P', 'T', '\0', '\1'};
constexpr uint32_t kVersion = 1;

void putU64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); }

using util::fnv1a;
constexpr auto hex = util::hex64;

struct Parsed {
  CheckpointMeta meta;
  std::string model, optim;
};

Parsed parse(const std::string& path, bool payloads) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CheckpointError("cannot read checkpoint '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string bytes = ss.str();
  if (bytes.size() < 8 + 4 + 8 || std::memcmp(bytes.data(), kMagic, 8) != 0) {
    throw CheckpointError("'" + path + "' is not a DepthLab checkpoint.");
  }
  uint32_t version;
  std::memcpy(&version, bytes.data() + 8, 4);
  if (version != kVersion) {
    throw CheckpointError("checkpoint '" + path + "' has format version " +
                          std::to_string(version) + "; this build reads version " +
                          std::to_string(kVersion) + ".");
  }
  if (bytes.size() < 8 + 8) throw CheckpointError("checkpoint '" + path + "' is truncated.");
  uint64_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - 8, 8);
  const std::string body = bytes.substr(0, bytes.size() - 8);
  if (fnv1a(body) != stored) {
    throw CheckpointError("checkpoint '" + path + "' is corrupt or truncated (checksum mismatch).");
  }
  size_t pos = 12;
  auto take = [&](std::string* out) {
    if (pos + 8 > body.size()) throw CheckpointError("checkpoint '" + path + "' is truncated.");
    uint64_t n;
    std::memcpy(&n, body.data() + pos, 8);
    pos += 8;
    if (n > body.size() - pos) throw CheckpointError("checkpoint '" + path + "' is truncated.");
    if (out) *out = body.substr(pos, n);
    pos += n;
  };
  Parsed p;
  std::string metaText;
  take(&metaText);
  take(payloads ? &p.model : nullptr);
  take(payloads ? &p.optim : nullptr);
  auto j = nlohmann::json::parse(metaText, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    throw CheckpointError("checkpoint '" + path + "' has an unreadable header.");
  }
  try {  // fields of the wrong type are as unreadable as broken JSON
    p.meta.step = j.value("step", int64_t{0});
    p.meta.scheme = j.value("scheme", std::string());
    p.meta.runId = j.value("run_id", int64_t{0});
    p.meta.config = j.value("config", nlohmann::json::object());
    p.meta.storeId = j.value("store_id", std::string());
    p.meta.configHash = j.value("config_hash", std::string());
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError("checkpoint '" + path + "' has an unreadable header (" + e.what() + ")");
  }
  if (p.meta.configHash.empty()) p.meta.configHash = modelConfigHash(p.meta.config);  // older files
  p.meta.checksum = hex(stored);
  return p;
}

}  // namespace

std::string saveCheckpoint(const std::string& path, model::Decoder& model,
                           torch::optim::Optimizer* optimizer, const CheckpointMeta& meta) {
  nlohmann::json j = {{"step", meta.step}, {"scheme", meta.scheme}, {"run_id", meta.runId},
                      {"config", meta.config}, {"store_id", meta.storeId},
                      {"config_hash", meta.configHash.empty() ? modelConfigHash(meta.config)
                                                              : meta.configHash}};
  std::string metaText = j.dump();
  std::ostringstream modelBytes, optimBytes;
  {
    torch::serialize::OutputArchive a;
    model->save(a);
    a.save_to(modelBytes);
  }
  if (optimizer) {
    torch::serialize::OutputArchive a;
    optimizer->save(a);
    a.save_to(optimBytes);
  }
  std::string body(kMagic, 8);
  body.append(reinterpret_cast<const char*>(&kVersion), 4);
  for (const std::string& part : {metaText, modelBytes.str(), optimBytes.str()}) {
    putU64(body, part.size());
    body += part;
  }
  const uint64_t sum = fnv1a(body);
  putU64(body, sum);

  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(body.data(), static_cast<std::streamsize>(body.size()));
    out.flush();
    if (!out) throw CheckpointError("cannot write checkpoint '" + tmp + "'");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw CheckpointError("cannot move checkpoint into place: " + ec.message());
  return hex(sum);
}

CheckpointMeta readCheckpointMeta(const std::string& path) { return parse(path, false).meta; }

std::string modelConfigHash(const nlohmann::json& config) {
  const auto empty = nlohmann::json::object();
  const auto& c = config.is_object() ? config : empty;
  nlohmann::json shape = {{"model", c.value("model", empty)}, {"options", c.value("options", empty)}};
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
  return hex(fnv1a(shape.dump()));
}

CheckpointMeta verifyCheckpoint(const std::string& path, const CheckpointOwner& owner) {
  const CheckpointMeta m = parse(path, false).meta;
  auto refuse = [&](const std::string& what, const std::string& expected, const std::string& found) {
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
  if (!owner.scheme.empty() && m.scheme != owner.scheme) refuse("the scheme", owner.scheme, m.scheme);
  if (!owner.storeId.empty() && !m.storeId.empty() && m.storeId != owner.storeId) {
    refuse("the database id", owner.storeId, m.storeId + " (another database's run)");
  }
  if (!owner.configHash.empty() && m.configHash != owner.configHash) {
    refuse("the model config hash", owner.configHash, m.configHash.empty() ? "absent" : m.configHash);
  }
  return m;
}

CheckpointMeta loadCheckpoint(const std::string& path, model::Decoder& model,
                              torch::optim::Optimizer* optimizer, torch::Device device) {
  Parsed p = parse(path, true);
  try {
    torch::serialize::InputArchive a;
    std::istringstream ms(p.model);
    a.load_from(ms, device);
    model->load(a);
    if (optimizer && !p.optim.empty()) {
      torch::serialize::InputArchive o;
      std::istringstream os(p.optim);
      o.load_from(os, device);
      optimizer->load(o);
    }
  } catch (const c10::Error& e) {
    throw CheckpointError("checkpoint '" + path + "' does not fit this model (" +
                          std::string(e.what_without_backtrace()) + ")");
  } catch (const std::exception& e) {  // the archive reader's own errors (TorchScript, zip)
    std::string what = e.what();
    if (auto at = what.find('\n'); at != std::string::npos) what.resize(at);
    throw CheckpointError("checkpoint '" + path + "' has an unreadable tensor archive (" + what + ")");
  }
  return p.meta;
}

}  // namespace depthlab::train

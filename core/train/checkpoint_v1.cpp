// Format version 1 (see checkpoint_v1.h):
//   "DLCKPT\0\1" | u32 version | u64 n | meta JSON (n bytes) | u64 n | model archive |
//   u64 n | optimizer archive (n may be 0) | u64 FNV-1a of everything before it
#include "train/checkpoint_v1.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "util/content_hash.h"

namespace depthlab::train::v1 {

namespace {

constexpr char kMagic[8] = {'D', 'L', 'C', 'K', 'P', 'T', '\0', '\1'};
using util::fnv1a;

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
  if (version != 1) {
    throw CheckpointError("checkpoint '" + path + "' has format version " +
                          std::to_string(version) + "; this build reads version " + "1 here.");
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
  p.meta = checkpointMetaFromJson(j, path);
  p.meta.checksum = util::hex64(stored);
  return p;
}

}  // namespace

CheckpointMeta readMeta(const std::string& path) { return parse(path, false).meta; }

CheckpointMeta load(const std::string& path, model::Decoder& model,
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
    throw CheckpointError("checkpoint '" + path + "' has an unreadable tensor archive (" + what +
                          ")");
  }
  return p.meta;
}

}  // namespace depthlab::train::v1

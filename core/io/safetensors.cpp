// Safetensors reader/writer; see safetensors.h.
#include "io/safetensors.h"

#include "io/safetensors_archive.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace depthlab::io {

namespace {
bool writeAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t w = ::write(fd, p, size);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    size -= static_cast<size_t>(w);
  }
  return true;
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
    header[name] = {{"dtype", safetensorsDtypeName(c.scalar_type())},
                    {"shape", c.sizes().vec()},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    ordered.push_back(c);
  }
  std::string h = header.dump();
  while (h.size() % 8 != 0) h += ' ';
  // Written whole to a temporary file beside `path`, synced, then renamed over it: a crash,
  // a full disk or a reader that maps the old file never sees a half-written one.
  std::string tmp = path + ".XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw SafetensorsError("cannot write '" + path + "': " + std::strerror(errno));
  const uint64_t n = h.size();
  bool ok = writeAll(fd, &n, 8) && writeAll(fd, h.data(), h.size());
  for (size_t i = 0; ok && i < ordered.size(); ++i) {
    const auto& c = ordered[i];
    ok = writeAll(fd, c.data_ptr(), static_cast<size_t>(c.numel()) * c.element_size());
  }
  ok = ok && ::fchmod(fd, 0644) == 0 && ::fsync(fd) == 0;
  const int err = errno;
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(ok ? errno : err);
    ::unlink(tmp.c_str());
    throw SafetensorsError("cannot write '" + path + "': " + why);
  }
  const auto folder = std::filesystem::path(path).parent_path();
  if (const int dfd = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY); dfd >= 0) {
    ::fsync(dfd);  // the rename itself survives a crash
    ::close(dfd);
  }
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

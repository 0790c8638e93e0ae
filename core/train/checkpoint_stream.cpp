// See checkpoint_stream.h.
#include "train/checkpoint_stream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>

#include "train/checkpoint.h"

namespace depthlab::train {

namespace {

constexpr char kMagic[8] = {'D', 'L', 'C', 'K', 'P', 'T', '\0', '\1'};
constexpr uint64_t kAlign = 64;
constexpr uint64_t kSlice = 64ull << 20;  // bytes hashed and moved at a time
constexpr uint64_t kMaxHeader = 256ull << 20;

uint64_t alignUp(uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

std::string errnoText() { return std::strerror(errno); }

const std::map<std::string, torch::ScalarType>& dtypeNames() {
  static const std::map<std::string, torch::ScalarType> m = {
      {"float32", torch::kFloat32},   {"float64", torch::kFloat64}, {"float16", torch::kFloat16},
      {"bfloat16", torch::kBFloat16}, {"int64", torch::kInt64},     {"int32", torch::kInt32},
      {"int16", torch::kInt16},       {"int8", torch::kInt8},       {"uint8", torch::kUInt8},
      {"bool", torch::kBool}};
  return m;
}

std::string dtypeName(torch::ScalarType t) {
  for (const auto& [name, type] : dtypeNames()) {
    if (type == t) return name;
  }
  throw CheckpointError(std::string("cannot checkpoint a tensor of type ") + c10::toString(t));
}

// A file written front to back, every byte hashed on its way; errors name the file.
class Sink {
 public:
  explicit Sink(const std::string& path) : m_path(path) {
    m_fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (m_fd < 0) fail("cannot create");
  }
  ~Sink() {
    if (m_fd >= 0) ::close(m_fd);
  }
  void write(const void* data, uint64_t n) {
    m_hash.update(data, n);
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t w = ::write(m_fd, p, std::min<uint64_t>(n, kSlice));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) fail("cannot write");
      p += w, n -= static_cast<uint64_t>(w), m_pos += static_cast<uint64_t>(w);
    }
  }
  void padTo(uint64_t pos) {
    static const char zeros[kAlign] = {};
    while (m_pos < pos) write(zeros, std::min<uint64_t>(pos - m_pos, kAlign));
  }
  uint64_t pos() const { return m_pos; }
  uint64_t digest() const { return m_hash.digest(); }
  void close() {
    if (::fsync(m_fd) != 0) fail("cannot flush");
    const int fd = m_fd;
    m_fd = -1;
    if (::close(fd) != 0) fail("cannot close");
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw CheckpointError(what + " checkpoint '" + m_path + "': " + errnoText());
  }
  std::string m_path;
  int m_fd = -1;
  uint64_t m_pos = 0;
  util::Xxh3Stream m_hash;
};

// One tensor's bytes, in the file's layout: straight from its memory when it is a contiguous CPU
// tensor, else through the host a slice at a time.
void writeTensor(Sink& sink, const torch::Tensor& t) {
  torch::NoGradGuard noGrad;
  const torch::Tensor c = t.detach().contiguous();
  if (c.device().is_cpu()) return sink.write(c.data_ptr(), c.nbytes());
  const torch::Tensor flat = c.view(-1);
  const int64_t per = std::max<int64_t>(1, static_cast<int64_t>(kSlice) / c.element_size());
  for (int64_t at = 0; at < flat.numel(); at += per) {
    const torch::Tensor host = flat.narrow(0, at, std::min(per, flat.numel() - at)).to(torch::kCPU);
    sink.write(host.data_ptr(), host.nbytes());
  }
}

void syncFolder(const std::filesystem::path& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);  // best effort: the rename is durable once the folder is
  ::close(fd);
}

}  // namespace

uint64_t writeCheckpointFile(const std::string& path, nlohmann::json header,
                             const std::vector<NamedTensor>& tensors) {
  auto table = nlohmann::json::array();
  uint64_t offset = 0;
  for (const auto& nt : tensors) {
    const uint64_t bytes = static_cast<uint64_t>(nt.tensor.numel()) * nt.tensor.element_size();
    table.push_back(
        {nt.name, dtypeName(nt.tensor.scalar_type()), nt.tensor.sizes().vec(), offset, bytes});
    offset = alignUp(offset + bytes);
  }
  header["tensors"] = std::move(table);
  header["data_bytes"] = offset;
  const std::string text = header.dump();

  const std::filesystem::path target(path);
  std::error_code ec;
  std::filesystem::create_directories(target.parent_path(), ec);
  const std::string tmp = path + ".tmp";
  try {
    Sink sink(tmp);
    sink.write(kMagic, 8);
    const uint32_t fields[2] = {kCheckpointVersion, 0};
    sink.write(fields, 8);
    const uint64_t n = text.size();
    sink.write(&n, 8);
    sink.write(text.data(), n);
    sink.padTo(alignUp(sink.pos()));
    const uint64_t dataStart = sink.pos();
    const auto& rows = header["tensors"];
    for (size_t i = 0; i < tensors.size(); ++i) {
      sink.padTo(dataStart + rows[i][3].get<uint64_t>());
      writeTensor(sink, tensors[i].tensor);
    }
    sink.padTo(dataStart + offset);
    const uint64_t sum = sink.digest();
    sink.write(&sum, 8);
    sink.close();
    std::filesystem::rename(tmp, path, ec);
    if (ec)
      throw CheckpointError("cannot move checkpoint '" + tmp + "' into place: " + ec.message());
    syncFolder(target.parent_path());
    return sum;
  } catch (...) {
    std::filesystem::remove(tmp, ec);
    throw;
  }
}

CheckpointFileReader::CheckpointFileReader(const std::string& path, int fd, uint64_t fileSize)
    : m_path(path), m_fd(fd), m_fileSize(fileSize) {
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  char lead[24];
  read(lead, sizeof lead);  // magic and version were checked by the caller
  uint64_t n;
  std::memcpy(&n, lead + 16, 8);
  if (n > kMaxHeader || n > fileSize) {
    throw CheckpointError("checkpoint '" + path + "' is truncated or has a damaged header.");
  }
  std::string text(n, '\0');
  read(text.data(), n);
  m_header = nlohmann::json::parse(text, nullptr, false);
  if (m_header.is_discarded() || !m_header.is_object()) {
    throw CheckpointError("checkpoint '" + path + "' has an unreadable header.");
  }
  m_dataStart = alignUp(m_pos);
  try {
    m_dataBytes = m_header.at("data_bytes").get<uint64_t>();
    for (const auto& row : m_header.at("tensors")) {
      TensorRecord r;
      r.name = row.at(0).get<std::string>();
      auto it = dtypeNames().find(row.at(1).get<std::string>());
      if (it == dtypeNames().end())
        throw CheckpointError("unknown tensor type " + row.at(1).dump());
      r.dtype = it->second;
      r.shape = row.at(2).get<std::vector<int64_t>>();
      r.offset = row.at(3).get<uint64_t>();
      r.bytes = row.at(4).get<uint64_t>();
      uint64_t numel = c10::elementSize(r.dtype);
      bool overflow = false;
      for (int64_t d : r.shape) {
        overflow |= d < 0 || __builtin_mul_overflow(numel, static_cast<uint64_t>(d), &numel);
      }
      if (overflow || numel != r.bytes || r.offset > m_dataBytes ||
          r.bytes > m_dataBytes - r.offset ||
          (!m_records.empty() && r.offset < m_records.back().offset + m_records.back().bytes)) {
        throw CheckpointError("tensor " + r.name + " has an inconsistent table entry");
      }
      m_records.push_back(std::move(r));
    }
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError("checkpoint '" + path + "' has an unreadable tensor table (" + e.what() +
                          ")");
  } catch (const CheckpointError& e) {
    throw CheckpointError("checkpoint '" + path + "': " + e.what());
  }
  if (m_dataStart + m_dataBytes + 8 != m_fileSize) {
    throw CheckpointError("checkpoint '" + path + "' is truncated (" + std::to_string(m_fileSize) +
                          " bytes; its header says " +
                          std::to_string(m_dataStart + m_dataBytes + 8) + ")");
  }
}

uint64_t CheckpointFileReader::storedChecksum() const {
  uint64_t v = 0;
  if (::pread(m_fd, &v, 8, static_cast<off_t>(m_fileSize - 8)) != 8) {
    throw CheckpointError("cannot read checkpoint '" + m_path + "': " + errnoText());
  }
  return v;
}

void CheckpointFileReader::read(void* dst, uint64_t n) {
  char* p = static_cast<char*>(dst);
  while (n > 0) {
    const ssize_t r = ::read(m_fd, p, std::min<uint64_t>(n, kSlice));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw CheckpointError("cannot read checkpoint '" + m_path + "': " + errnoText());
    if (r == 0) throw CheckpointError("checkpoint '" + m_path + "' is truncated.");
    m_hash.update(p, static_cast<size_t>(r));
    p += r, n -= static_cast<uint64_t>(r), m_pos += static_cast<uint64_t>(r);
  }
}

void CheckpointFileReader::skip(uint64_t n) {
  const uint64_t want = std::min<uint64_t>(kSlice, std::max<uint64_t>(n, 4096));
  if (m_buffer.size() < want) m_buffer.resize(want);
  while (n > 0) {
    const uint64_t len = std::min<uint64_t>(n, m_buffer.size());
    read(m_buffer.data(), len);
    n -= len;
  }
}

void CheckpointFileReader::readInto(const TensorRecord& r, torch::Tensor dst) {
  torch::NoGradGuard noGrad;
  if (dst.device().is_cpu() && dst.is_contiguous() && dst.scalar_type() == r.dtype) {
    return read(dst.data_ptr(), r.bytes);  // straight into the tensor's memory
  }
  torch::Tensor flat =
      dst.is_contiguous() ? dst.view(-1) : torch::empty({dst.numel()}, dst.options());
  const int64_t elem = static_cast<int64_t>(c10::elementSize(r.dtype));
  const int64_t per = std::max<int64_t>(1, static_cast<int64_t>(kSlice) / elem);
  const auto hostOptions = torch::TensorOptions().dtype(r.dtype);
  torch::Tensor host = torch::empty({std::min(per, flat.numel())}, hostOptions);
  for (int64_t at = 0; at < flat.numel(); at += per) {
    const int64_t len = std::min(per, flat.numel() - at);
    read(host.data_ptr(), static_cast<uint64_t>(len * elem));
    flat.narrow(0, at, len).copy_(host.narrow(0, 0, len));
  }
  if (!dst.is_contiguous()) dst.copy_(flat.view(dst.sizes()));
}

void CheckpointFileReader::readAll(
    const std::function<torch::Tensor(const TensorRecord&)>& destinationOf) {
  for (const auto& r : m_records) {
    skip(m_dataStart + r.offset - m_pos);
    torch::Tensor dst = destinationOf(r);
    if (dst.defined())
      readInto(r, dst);
    else
      skip(r.bytes);
  }
  skip(m_dataStart + m_dataBytes - m_pos);
  const uint64_t computed = m_hash.digest();
  uint64_t stored;
  char* p = reinterpret_cast<char*>(&stored);
  for (uint64_t got = 0; got < 8;) {
    const ssize_t r = ::read(m_fd, p + got, 8 - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) throw CheckpointError("checkpoint '" + m_path + "' is truncated.");
    got += static_cast<uint64_t>(r);
  }
  if (computed != stored) {
    throw CheckpointError("checkpoint '" + m_path + "' is corrupt (checksum mismatch).");
  }
}

}  // namespace depthlab::train

// libFuzzer target: a DepthLab checkpoint file. The first input byte picks the mode: as given
// (the checksum guards the payload, so the model loader sees only intact archives), or with the
// trailing checksum recomputed so that the header parser and the ownership checks see mutated
// content. Any input must load or end in CheckpointError, never a crash or a sanitizer report.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "model/decoder.h"
#include "tiny_model.h"
#include "train/checkpoint.h"
#include "util/xxh3_stream.h"

namespace {
uint64_t fnv1a(const uint8_t* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace depthlab;
  if (size < 1) return 0;
  const bool fixChecksum = data[0] & 1;
  std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  if (fixChecksum && bytes.size() >= 8) {
    // version 1 files end in FNV-1a, version 2 in XXH3-64
    const bool v2 = bytes.size() >= 12 && bytes[8] == 2 && bytes[9] == 0 && bytes[10] == 0 && bytes[11] == 0;
    const uint64_t sum = v2 ? depthlab::util::xxh3(bytes.data(), bytes.size() - 8)
                            : fnv1a(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size() - 8);
    std::memcpy(bytes.data() + bytes.size() - 8, &sum, 8);
  }
  static const std::string path = "/tmp/depthlab-fuzz-ck-" + std::to_string(getpid());
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  try {
    auto meta = train::readCheckpointMeta(path);
    train::CheckpointOwner owner;
    owner.runId = 1;
    owner.scheme = "lns";
    owner.configHash = train::modelConfigHash(meta.config);
    train::verifyCheckpoint(path, owner);
    if (!fixChecksum) {  // an intact archive: load it into the tiny model it was written from
      static const experiment::ExperimentConfig c = fuzz::tinyModelConfig();
      model::Decoder m(c.model, c.options, "lns");
      train::loadCheckpoint(path, m, nullptr, torch::kCPU);
    }
  } catch (const train::CheckpointError&) {
  }
  return 0;
}

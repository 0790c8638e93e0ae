// libFuzzer target: a token file (a DepthLab shard, llm.c's or nanoGPT's .bin). Any input must
// map and read back or end in DataError, never a crash or a read past the mapping.
// Found on its first minute: a shard whose ids exceed its header's vocabulary (now a test).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "data/corpus.h"
#include "data/token_store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/depthlab-fuzz-tok-" + std::to_string(getpid()) + ".bin";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    auto tokens = depthlab::data::openTokenFiles(path);
    std::vector<int64_t> all(tokens->size());
    tokens->read(0, all.size(), all.data());
    // A .bin's vocabulary is measured, so it bounds every id; a shard's is its header's claim,
    // which TokenDataset checks window by window (a damaged shard is a DataError there).
    const bool shard = size >= 8 && std::memcmp(data, "DLTSHARD", 8) == 0;
    for (int64_t t : all) {
      if (t < 0 || (!shard && t >= tokens->vocabSize())) __builtin_trap();
    }
  } catch (const depthlab::data::DataError&) {
  }
  return 0;
}

// Every input the checkpoint fuzzer ever crashed on (tests/fuzz/crashers/checkpoint-*), replayed
// through the loader the way fuzz_checkpoint feeds it: each must now end in CheckpointError.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "support/build_paths.h"
#include "support/temp_dir.h"
#include "train/checkpoint.h"
#include "util/content_hash.h"

using namespace depthlab;
namespace fs = std::filesystem;

TEST(CheckpointCrashers, EveryKnownCrasherIsAClearError) {
  const fs::path dir = fs::path(depthlab::test::sourceDir()) / "tests/fuzz/crashers";
  test::TempDir tmp;
  int replayed = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind("checkpoint-", 0) != 0) continue;
    std::string bytes = test::readFile(e.path().string());
    if (bytes.empty()) continue;
    const bool fixChecksum = bytes[0] & 1;  // the harness's mode byte
    bytes.erase(0, 1);
    if (fixChecksum && bytes.size() >= 8) {
      const uint64_t sum = util::fnv1a(std::string_view(bytes.data(), bytes.size() - 8));
      std::memcpy(bytes.data() + bytes.size() - 8, &sum, 8);
    }
    const std::string path = tmp.file("replay.ckpt");
    test::writeFile(path, bytes);
    SCOPED_TRACE(e.path().filename().string());
    try {
      train::readCheckpointMeta(path);
    } catch (const train::CheckpointError& err) {
      EXPECT_NE(std::string(err.what()).find(path), std::string::npos) << err.what();
    }
    ++replayed;
  }
  std::printf("replayed %d checkpoint crasher(s)\n", replayed);
}

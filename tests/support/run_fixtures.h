// Helpers for tests that train through the run loop or write checkpoints: a small word corpus
// on disk and checkpoint metadata in one call.
#pragma once

#include <cstdint>
#include <string>

#include "support/temp_dir.h"
#include "train/checkpoint.h"

namespace depthlab::test {

/// A repetitive word text of about `bytes` bytes written to dir/corpus.txt; returns its path.
inline std::string writeWordCorpus(const TempDir& dir, size_t bytes = 60000) {
  std::string text;
  const char* words[] = {"the ", "depth ", "of ", "layers ", "curse ", "norm ", "scaling ", "\n"};
  for (size_t i = 0; text.size() < bytes; ++i) text += words[(i * 7 + i / 5) % 8];
  writeFile(dir.file("corpus.txt"), text);
  return dir.file("corpus.txt");
}

inline train::CheckpointMeta checkpointMeta(int64_t step, const std::string& scheme,
                                            nlohmann::json config, int64_t runId) {
  train::CheckpointMeta m;
  m.step = step;
  m.scheme = scheme;
  m.config = std::move(config);
  m.runId = runId;
  return m;
}

}  // namespace depthlab::test

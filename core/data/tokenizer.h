// SentencePiece tokenizers, always run out of process (Debian's spm_train / spm_encode):
// libsentencepiece bundles protobuf symbols that crash any process also linking LibTorch.
// Models are cached next to the corpus (or in the data folder's cache when it is read-only).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace depthlab::data {

/// A SentencePiece model driven through its command-line tools. (Byte-level tokens need no
/// class: a byte is its own id, see tokenize_pipeline.)
class SpmTokenizer {
 public:
  explicit SpmTokenizer(std::string modelPath);  // reads the vocab size (spm_export_vocab)
  std::string name() const { return "spm:" + m_model; }
  int vocabSize() const { return m_vocab; }
  std::vector<int32_t> encode(const std::string& text) const;
  /// Encodes a file without loading it first (spm_encode reading the file).
  std::vector<int32_t> encodeFile(const std::string& path) const;
  const std::string& modelPath() const { return m_model; }

  /// Trains a BPE model of `vocab` pieces on `corpusFile` into `<prefix>.model`.
  static std::string train(const std::string& corpusFile, const std::string& prefix, int vocab,
                           const std::string& modelType = "bpe");
  /// True when the spm_* tools are on PATH.
  static bool toolsAvailable();

 private:
  std::string m_model;
  int m_vocab = 0;
};

/// A folder where caches for `corpusPath` can be written: beside it, else the data cache.
std::string cacheDirFor(const std::string& corpusPath);

/// Vocabulary sizes `spm:N` accepts, and the version of the training settings (part of the
/// cache key: a change of settings retrains).
inline constexpr int kSpmMinVocab = 16;
inline constexpr int kSpmMaxVocab = 1000000;
inline constexpr const char* kSpmSettingsVersion = "s1";
/// N of "spm:N"; throws DataError naming the spec when N is not a number in range.
int spmVocabSize(const std::string& spec);

}  // namespace depthlab::data

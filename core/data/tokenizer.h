// SentencePiece tokenizers, always run out of process (Debian's spm_train / spm_encode, and the
// lab's depthlab-spm-encode for whole documents): libsentencepiece bundles protobuf symbols that
// crash any process also linking LibTorch.
// Models are cached next to the corpus (or in the data folder's cache when it is read-only).
// Also the byte tokenizer's ids: bytes 0..255 and an end-of-document id of its own.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace depthlab::data {

/// The byte tokenizer needs no class: a byte is its own id (see tokenize_pipeline), and the
/// end of every document is the id after them.
inline constexpr int kByteEodId = 256;
inline constexpr int kByteVocab = 257;  // 256 bytes + end-of-document

/// A SentencePiece model driven through its command-line tools.
class SpmTokenizer {
 public:
  /// Reads the vocabulary (spm_export_vocab): its size and the end-of-sentence piece's id.
  explicit SpmTokenizer(std::string modelPath);
  std::string name() const { return "spm:" + m_model; }
  int vocabSize() const { return m_vocab; }
  /// The id of the model's end-of-sentence piece "</s>" (spm:N models: 1); -1 when it has none.
  /// spm_encode never writes it: the store puts it between documents.
  int eosId() const { return m_eos; }
  std::vector<int32_t> encode(const std::string& text) const;
  /// encodeFile of `text` written to `scratch` (removed afterwards, also on failure).
  std::vector<int32_t> encodeText(const std::string& text, const std::string& scratch,
                                  std::vector<size_t>* lineEnds = nullptr) const;
  /// Encodes a file without loading it first (spm_encode reading the file). spm_encode writes
  /// one line of ids for every line of the file; `lineEnds`, when given, gets the number of
  /// ids up to the end of each of them.
  std::vector<int32_t> encodeFile(const std::string& path,
                                  std::vector<size_t>* lineEnds = nullptr) const;
  const std::string& modelPath() const { return m_model; }
  /// True when documents are encoded whole through depthlab-spm-encode, their newlines given
  /// to the model as its own tokenizer would: for a model where spm_encode's lines give other
  /// ids (its normalisation keeps newlines or spaces, as Llama's tokenizer.model). Models
  /// whose normalisation drops them (spm:N's, T5's) take the lines: the same ids, ~4x faster
  /// on long documents.
  bool encodesWholeDocuments() const { return !m_helper.empty(); }
  /// The ids of each document, encoded whole through depthlab-spm-encode --documents; `scratch`
  /// is a file it may write. Needs encodesWholeDocuments(); throws DataError.
  std::vector<std::vector<int32_t>> encodeDocuments(const std::vector<std::string_view>& docs,
                                                    const std::string& scratch) const;

  /// Trains a BPE model of `vocab` pieces on `corpusFile` into `<prefix>.model`.
  static std::string train(const std::string& corpusFile, const std::string& prefix, int vocab,
                           const std::string& modelType = "bpe");
  /// True when the spm_* tools are on PATH.
  static bool toolsAvailable();

 private:
  /// Whether spm_encode's lines give the ids whole documents get (a probe text, once).
  bool linesLoseNothing() const;

  std::string m_model;
  std::string m_helper;  // depthlab-spm-encode when documents go whole, else ""
  int m_vocab = 0;
  int m_eos = -1;
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

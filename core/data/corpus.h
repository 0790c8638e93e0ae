// Corpus helpers: whether a path names a token file, reading one into memory (tests, small
// files; training maps them, see token_store), and telling text from binary data.
// No tokenizing, no folder walking (corpus_sources).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace depthlab::data {

class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// True for paths ending in .bin: pre-tokenized input.
bool isTokenFile(const std::string& path);
/// Tokens of a .bin file (uint16; llm.c header checked when present).
std::vector<int32_t> readTokenFile(const std::string& path);
/// Why `text` is not usable UTF-8 text ("" when it is): NUL bytes or >1% invalid sequences.
std::string binaryReason(const std::string& text);

}  // namespace depthlab::data
